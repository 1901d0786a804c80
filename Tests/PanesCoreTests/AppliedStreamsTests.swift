@testable import PanesCore
import Testing

/// What a document remembers of client operations past its log: by op-id stream, the highest
/// counter applied, bounded by age and count, and its stored form.
@Suite struct AppliedStreamsTests {
    static func entry(_ opId: String, revision: Int64, at: Millis = 1_000) -> StoredOperation {
        StoredOperation(revision: revision, operation: TextOperation(), opId: opId,
                        author: DocumentAuthor(scene: "scn", user: "u", name: "U"), createdAt: at)
    }

    @Test func anOperationCountsAsAppliedWhenALaterOneOfItsStreamWas() {
        var applied = AppliedStreams()
        applied.fold(Self.entry("sess.page1:7", revision: 10))
        applied.fold(Self.entry("sess.page1:5", revision: 8))  // older: changes nothing
        #expect(applied.entries["sess.page1"]?.counter == 7)
        #expect(applied.entries["sess.page1"]?.revision == 10)
        #expect(applied.applied("sess.page1:7"))
        #expect(applied.applied("sess.page1:3"))
        #expect(!applied.applied("sess.page1:8"))
        #expect(!applied.applied("sess.page2:1"))
    }

    /// Op ids are a client's: a stream spelled in NFD is not the NFC one (CONCEPTS.md, 10), or
    /// an operation of one would count as applied because the other's was.
    @Test func streamsThatAreTheSameTextInOtherBytesAreTwoStreams() throws {
        var applied = AppliedStreams()
        applied.fold(Self.entry("caf\u{E9}:7", revision: 3))
        #expect(applied.applied("caf\u{E9}:7"))
        #expect(!applied.applied("cafe\u{301}:2"))
        #expect(!applied.applied("\u{212A}:1"))
        applied.fold(Self.entry("K:4", revision: 4))
        #expect(!applied.applied("\u{212A}:1"))
        #expect(applied.entries.count == 2)
        let stored = try AppliedStreams(json: applied.json)
        #expect(stored == applied)
        #expect(!stored.applied("cafe\u{301}:2"))
    }

    @Test func anOpIdWithoutANumericTailIsItsOwnStream() {
        var applied = AppliedStreams()
        applied.fold(Self.entry("no-counter", revision: 1))
        applied.fold(Self.entry("tail:x9", revision: 2))
        #expect(applied.applied("no-counter"))
        #expect(applied.applied("tail:x9"))
        #expect(!applied.applied("tail:x8"))
        #expect(!applied.applied("no-counter:1"))
    }

    @Test func oldEntriesGoFirstAndTheCountIsBounded() {
        var applied = AppliedStreams()
        for n in 0..<10 { applied.fold(Self.entry("s\(n):1", revision: Int64(n), at: Millis(n * 100))) }
        applied.prune(olderThan: 300, limit: 100)
        #expect(applied.entries.count == 7)
        applied.prune(olderThan: 0, limit: 2)
        #expect(Set(applied.entries.keys) == ["s8", "s9"])
    }

    @Test func theStoredFormRoundTripsAndReadsTheObjectFormWrittenBefore() throws {
        let applied = AppliedStreams(["a": .init(counter: 3, revision: 9, at: 77),
                                      "caf\u{E9}": .init(counter: 1, revision: 2, at: 3),
                                      "cafe\u{301}": .init(counter: 4, revision: 5, at: 6)])
        guard case .array(let rows) = applied.json else { Issue.record("not an array: \(applied.json)"); return }
        #expect(rows.count == 3)
        #expect(try AppliedStreams(json: applied.json) == applied)
        let before: JSONValue = ["a": [3, 9, 77]]
        #expect(try AppliedStreams(json: before) == AppliedStreams(["a": .init(counter: 3, revision: 9, at: 77)]))
        #expect(try AppliedStreams(json: [:]) == AppliedStreams())
    }

    /// The same state is stored as the same text: entries in the order of their stream's bytes,
    /// however the state was built. A dictionary's order differs from one instance to the next,
    /// so the two built here in opposite orders (one rebuilt by a prune too) would differ.
    /// `e\u{301}x` sorts before `f` by bytes (`e` < `f`) though after it as a Swift `String`
    /// (`é` > `f`); `cafe\u{301}` before `caf\u{E9}` (0x65 < 0xC3), which `String` calls equal.
    @Test func theSameStateIsStoredInTheOrderOfItsStreamsBytesHoweverItWasBuilt() {
        let streams = (0..<24).map { "sess.page\($0)" }
            + ["caf\u{E9}", "cafe\u{301}", "e\u{301}x", "f", "K", "\u{212A}", "Z", "a"]
        var forward = AppliedStreams(), backward = AppliedStreams()
        for (n, stream) in streams.enumerated() {
            forward.fold(Self.entry("\(stream):\(n + 1)", revision: Int64(n), at: 1_000 + Millis(n)))
        }
        for (n, stream) in streams.enumerated().reversed() {
            backward.fold(Self.entry("\(stream):\(n + 1)", revision: Int64(n), at: 1_000 + Millis(n)))
        }
        backward.prune(olderThan: 0, limit: streams.count)
        #expect(forward == backward)
        #expect(forward.json == backward.json)

        let byBytes = streams.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        guard case .array(let rows) = forward.json else { Issue.record("not an array: \(forward.json)"); return }
        let written = rows.map { row -> [UInt8] in
            guard case .array(let fields) = row, case .string(let stream) = fields.first else { return [] }
            return Array(stream.utf8)
        }
        #expect(written == byBytes.map { Array($0.utf8) })
        #expect("e\u{301}x".utf8.lexicographicallyPrecedes("f".utf8) && "f" < "e\u{301}x")
    }

    /// Nothing unreadable is skipped: an entry forgotten lets a resent edit apply twice.
    @Test(arguments: [["a": [3, 9, 77], "b": "nonsense"], ["a": [1, 2]], [["a", 1, 2]], [[1, 1, 2, 3]], "x"] as [JSONValue])
    func anEntryItCannotReadIsRefused(_ damaged: JSONValue) {
        #expect(throws: PanesError.self) { try AppliedStreams(json: damaged) }
    }
}
