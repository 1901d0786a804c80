@testable import PanesCore
import Testing

/// The log against an array: appends, drops from the front (compaction), indexing, and copies
/// that change independently.
struct OperationLogTests {
    private static func entry(_ revision: Int64) -> StoredOperation {
        StoredOperation(revision: revision, operation: TextOperation([.insert("x")]), opId: "s:\(revision)",
                        author: DocumentAuthor(scene: "s", user: "u", name: "U"), createdAt: 0)
    }

    @Test(arguments: 0..<12 as Range<UInt64>)
    func appendsAndDropsMatchAnArray(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var log = OperationLog()
        var model: [StoredOperation] = []
        var next: Int64 = 1
        var copies: [(OperationLog, [StoredOperation])] = []
        for _ in 0..<200 {
            if Int.random(in: 0..<5, using: &random) == 0 {
                let count = Int.random(in: 0...model.count, using: &random)
                log.removeFirst(count)
                model.removeFirst(count)
            } else {
                for _ in 0..<Int.random(in: 1...40, using: &random) {
                    log.append(Self.entry(next))
                    model.append(Self.entry(next))
                    next += 1
                }
            }
            #expect(log.count == model.count, "seed \(seed)")
            #expect(log.first == model.first && log.last == model.last, "seed \(seed)")
            if model.count < 200 { #expect(log.map(\.revision) == model.map(\.revision), "seed \(seed)") }
            if Int.random(in: 0..<10, using: &random) == 0 { copies.append((log, model)) }
        }
        // Copies kept their contents while the original went on changing.
        for (copy, expected) in copies { #expect(copy.map(\.revision) == expected.map(\.revision), "seed \(seed)") }
    }

    @Test func aSliceFromAnIndexReadsTheRest() {
        let log = OperationLog((1...100).map(Self.entry))
        #expect(log[70...].map(\.revision) == Array(71...100))
        #expect(log[log.endIndex...].isEmpty)
    }
}
