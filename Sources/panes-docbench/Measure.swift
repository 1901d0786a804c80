// The document micro-benchmark's meters: CPU time of the calling thread, heap allocations
// and heap bytes in use (both from CAllocationCounter).
import CAllocationCounter
import Glibc

/// What one measured run cost, per operation.
struct Cost {
    var operations: Int
    var cpuNanoseconds: UInt64
    var allocations: UInt64

    var microsecondsPerOperation: Double { Double(cpuNanoseconds) / 1_000 / Double(max(operations, 1)) }
    var allocationsPerOperation: Double { Double(allocations) / Double(max(operations, 1)) }
}

enum Meter {
    /// Runs `body`, which performs `operations` operations, and measures it.
    static func measure(operations: Int, _ body: () throws -> Void) rethrows -> Cost {
        let allocationsBefore = pac_allocations()
        let before = threadCPU()
        try body()
        let after = threadCPU()
        return Cost(operations: operations, cpuNanoseconds: after - before,
                    allocations: pac_allocations() - allocationsBefore)
    }

    static func threadCPU() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Heap bytes handed out and not yet freed.
    static func heapInUse() -> Int {
        Int(pac_heap_in_use())
    }
}

/// A fixed-seed generator, so every run and both builds edit alike.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Document text and keystrokes.
enum Typing {
    static let words = ["the ", "rope ", "héllo ", "naïve ", "😀 ", "漢字 ", "e\u{301} ", "\n", "CRLF\r\n", "a "]

    /// Mixed text of at least `bytes` UTF-8 bytes.
    static func text(bytes: Int, using random: inout SplitMix64) -> String {
        var text = ""
        text.reserveCapacity(bytes + 16)
        while text.utf8.count < bytes { text += words.randomElement(using: &random)! }
        return text
    }

    /// A keystroke in a document of `length` scalars: typing one to three characters, or
    /// deleting as many, somewhere in it; deleting the more likely the more the document has
    /// grown past `around`, so a long run keeps it near that size.
    static func keystroke(length: Int, around: Int,
                          using random: inout SplitMix64) -> (at: Int, delete: Int, insert: String) {
        let count = Int.random(in: 1...3, using: &random)
        let growth = Double(length - around) / Double(max(around, 64))
        let deleting = length >= count && Double.random(in: 0..<1, using: &random) < 0.5 + min(max(growth, -0.5), 0.5)
        if deleting { return (Int.random(in: 0...(length - count), using: &random), count, "") }
        let insert = String((0..<count).map { _ in "abcdefghij é😀".randomElement(using: &random)! })
        return (Int.random(in: 0...length, using: &random), 0, insert)
    }
}
