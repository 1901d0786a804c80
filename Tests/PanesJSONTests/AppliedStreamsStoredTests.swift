import PanesCore
import PanesJSON
import Testing

/// A document's applied op ids as the stores write and read them (`AppliedStreams+Stored.swift`).
@Suite struct AppliedStreamsStoredTests {
    /// The same state is written as the same bytes, however its dictionary was built: here one
    /// from a list and one filled in the opposite order with room to spare, whose orders differ.
    /// Two streams that are the same text in other bytes stay two, each where its bytes sort.
    @Test func theSameStateIsWrittenAsTheSameBytesWhateverOrderItWasBuiltIn() throws {
        let streams = (0..<32).map { "s\($0).page" } + ["caf\u{E9}", "cafe\u{301}", "K", "\u{212A}", "z"]
        let pairs = streams.enumerated().map { n, stream in
            (Identifier(stream), AppliedStreams.Entry(counter: Int64(n), revision: Int64(n * 2), at: 1_000 + Millis(n)))
        }
        var reversed = [Identifier: AppliedStreams.Entry](minimumCapacity: 256)
        for (stream, entry) in pairs.reversed() { reversed[stream] = entry }
        let one = AppliedStreams(Dictionary(uniqueKeysWithValues: pairs)), other = AppliedStreams(reversed)

        let written = JSONCodec.encode(one.json)
        #expect(written == JSONCodec.encode(other.json))
        #expect(try AppliedStreams.stored(String(decoding: written, as: UTF8.self)) == one)
        // Sorted by bytes: `K` (0x4B) before `caf…`, `cafe\u{301}` (0x65) before `caf\u{E9}` (0xC3),
        // `z` before U+212A (0xE2…), whatever a `String` comparison would say.
        guard case .success(.array(let rows)) = JSONCodec.decode(String(decoding: written, as: UTF8.self),
                                                                  acceptingEquivalentKeys: true) else {
            Issue.record("not an array: \(String(decoding: written, as: UTF8.self))"); return
        }
        let stored = rows.map { row -> [UInt8] in
            guard case .array(let fields) = row, case .string(let stream) = fields.first else { return [] }
            return Array(stream.utf8)
        }
        #expect(stored == streams.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) })
    }
}
