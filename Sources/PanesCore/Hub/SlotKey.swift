/// A key a `SlotIndex` (and so a `DenseTable`) hashes: by default its `hashValue` (SipHash
/// through `Hasher`, seeded per process), which is what any key a client can choose must use.
///
/// The hub's own tables are keyed by identifiers the server mints: connection numbers counted
/// by the transport, and the random bytes of session and scene ids. Their keys are never chosen
/// by a client (a client only looks them up), so they spread over the buckets by themselves and
/// need no SipHash, which cost a look-up ~200 instructions and a resume eight of them,
/// and more as three growing tables were rebuilt (issue 27). Those keys give `slotHash`, a few
/// multiplications (`SlotHash.mix`); an identifier that is not in the minted form (any text a
/// client sent) still hashes through `Hasher`. So these tables are for keys the server made:
/// a table that ever inserts an identifier a client chose must key it by its `hashValue`.
protocol SlotKey: Hashable {
    /// The key's hash for the index: equal keys give equal values, its low bits pick the bucket
    /// and its top byte is kept beside it (`SlotIndex.tag`).
    var slotHash: Int { get }
}

extension SlotKey {
    var slotHash: Int { hashValue }
}

/// What the minted identifiers' `slotHash` is made with.
enum SlotHash {
    /// splitmix64's finalizer: every bit of the result depends on every bit of `x`, so the
    /// low bits (the bucket) and the top byte (the tag) both spread.
    @inline(__always)
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ z >> 30) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ z >> 27) &* 0x94D0_49BB_1331_11EB
        return z ^ z >> 31
    }

    /// A per-process value mixed into an identifier's words before they are mixed: taken from
    /// `Hasher`'s own seed (fixed when `SWIFT_DETERMINISTIC_HASHING` is set, as for the tests),
    /// so which ids share a bucket changes from one run to the next.
    static let seed: UInt64 = {
        var hasher = Hasher()
        hasher.combine(0x736C_6F74 as UInt64)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }()
}

extension ConnectionID: SlotKey {
    /// The transport numbers connections one after another (service connections with a high
    /// bit set): no client picks one, but the numbers are predictable (counted from 1, the count
    /// published in /metrics), so the seed goes in too: else a client could keep only the
    /// connections whose numbers land in a few buckets and build one long probing run.
    var slotHash: Int { Int(bitPattern: UInt(SlotHash.mix(rawValue ^ SlotHash.seed))) }
}

extension InlineIdentifier {
    /// `SlotKey.slotHash` of an identifier: its two words mixed when it is packed (a minted one,
    /// or one a client spelled in that form), its bytes through `Hasher` when it is text.
    /// Equal identifiers have the same form (see the type's note), so the same hash.
    var slotHash: Int {
        switch storage {
        case .packed(let high, let low, let length):
            // The seed enters before the low word is mixed, so which ids share a bucket depends
            // on it; the length folded in as `hash(into:)` folds it.
            Int(bitPattern: UInt(SlotHash.mix(SlotHash.mix(low &+ UInt64(length) ^ SlotHash.seed) &+ high)))
        case .text:
            hashValue
        }
    }
}

extension SessionID: SlotKey {
    var slotHash: Int { bytes.slotHash }
}

extension SceneID: SlotKey {
    var slotHash: Int { bytes.slotHash }
}
