@testable import PanesCore
import Testing

@Suite struct DeadlineQueueTests {
    @Test func popsOnlyWhatExpiredSoonestFirstWhateverTheInsertionOrder() {
        var queue = DeadlineQueue<String>()
        let deadlines: [(String, Millis)] = [("e", 50), ("a", 10), ("d", 40), ("b", 20), ("f", 60), ("c", 30), ("b2", 20)]
        for (item, deadline) in deadlines { queue.push(item, at: deadline) }
        #expect(queue.popDue(now: 9).map(\.key) == [])
        let first = queue.popDue(now: 20).map(\.key)
        #expect(first.first == "a" && Set(first.dropFirst()) == ["b", "b2"] && first.count == 3)
        #expect(queue.popDue(now: 45).map(\.key) == ["c", "d"])
        #expect(queue.count == 2)
        #expect(queue.popDue(now: 1_000).map(\.key) == ["e", "f"])
        #expect(queue.count == 0)
    }

    @Test func staysOrderedUnderManyScrambledInsertions() {
        var queue = DeadlineQueue<Int>()
        var deadlines: [Millis] = []
        for index in 0..<500 {
            // A fixed scramble (multiplication modulo a prime), with repeats from the modulus.
            let deadline = Millis(index * 7_919 % 1_009)
            deadlines.append(deadline)
            queue.push(index, at: deadline)
        }
        let popped = queue.popDue(now: 1_009).map(\.key).map { deadlines[$0] }
        #expect(popped == deadlines.sorted())
    }
}
