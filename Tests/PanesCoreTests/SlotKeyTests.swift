@testable import PanesCore
import Testing

/// `SlotKey`: the hub's tables hash the server's own identifiers without SipHash; equal ids
/// still hash alike however they were made, and minted ids, and connection numbers counted one
/// after another, still spread over the buckets.
@Suite struct SlotKeyTests {
    @Test func equalIdentifiersHashAlikeHoweverTheyWereMade() {
        let text = "0123456789abcdef0123456789abcdef"
        let session = SessionID(text)
        let read = Array(text.utf8).withUnsafeBytes { SessionID(utf8: $0) }
        #expect(session == read && session.slotHash == read.slotHash)

        let random: [UInt8] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x10, 0x32, 0x54, 0x76]
        let minted = random.withUnsafeBytes { SceneID(bytes: InlineIdentifier(prefix: "scn_", random: $0)!) }
        let spelled = SceneID("scn_0123456789abcdef10325476")
        #expect(minted == spelled && minted.slotHash == spelled.slotHash)

        // Not the minted form: the bytes through `Hasher`, as any key a client can choose.
        let other = SessionID("not-a-minted-id")
        #expect(other.slotHash == other.hashValue && other.slotHash == SessionID("not-a-minted-id").slotHash)
    }

    /// How many of 16,384 buckets 4,096 keys land in, by the low bits of their `slotHash`:
    /// about 3,600 for a random hash, all 4,096 for numbers in order; a hash that ignored the
    /// bits these keys differ in would put them all in a few.
    func bucketsFilled<Key: SlotKey>(_ keys: [Key]) -> Int {
        Set(keys.map { $0.slotHash & 0x3FFF }).count
    }

    /// The top byte kept beside each bucket spreads too (`SlotIndex.tag`).
    func tagsSeen<Key: SlotKey>(_ keys: [Key]) -> Int {
        Set(keys.map { UInt8(truncatingIfNeeded: $0.slotHash >> 56) }).count
    }

    func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    @Test func mintedIdentifiersSpreadWhicheverWordTheyDifferIn() {
        let inLow = (0..<4_096).map { SessionID("00000000000000a0" + hex(UInt64($0))) }
        let inHigh = (0..<4_096).map { SessionID(hex(UInt64($0) << 20) + "00000000000000a0") }
        let scenes = (0..<4_096).map { SceneID("scn_" + String(hex(UInt64($0) * 0x9E37).suffix(8)) + "0000000000000000") }
        for keys in [inLow, inHigh] {
            #expect(bucketsFilled(keys) > 3_000 && tagsSeen(keys) > 200)
        }
        #expect(bucketsFilled(scenes) > 3_000 && tagsSeen(scenes) > 200)
        #expect(inLow.allSatisfy { $0.bytes.isPacked } && scenes.allSatisfy { $0.bytes.isPacked })
    }

    @Test func connectionsNumberedInOrderSpread() {
        let connections = (1...4_096).map { ConnectionID(UInt64($0)) }
        let service = (1...4_096).map { ConnectionID(Hub.serviceConnectionBit | UInt64($0)) }
        #expect(bucketsFilled(connections) > 3_000 && tagsSeen(connections) > 200)
        #expect(bucketsFilled(service) > 3_000)
    }
}
