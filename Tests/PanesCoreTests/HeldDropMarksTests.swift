@testable import PanesCore
import Testing

/// `HeldDropMarks`: the sessions a node reads held drops for at their next attach, at most a
/// bound of them, the oldest forgotten past it.
@Suite struct HeldDropMarksTests {
    static func ids(_ count: Int) -> [SessionID] { (0..<count).map { SessionID("ses_\($0)") } }

    @Test func pastTheLimitTheOldestMarkIsForgottenAndCounted() {
        var marks = HeldDropMarks()
        let ids = Self.ids(4)
        let forgotten = ids.map { marks.insert($0, limit: 3) }
        #expect(forgotten == [0, 0, 0, 1])
        #expect(!marks.contains(ids[0]))
        #expect(ids[1...].allSatisfy(marks.contains))
        #expect(marks.count == 3)
    }

    @Test func aMarkMadeAgainCountsAsNewAndARemovedOneIsNotForgottenAgain() {
        var marks = HeldDropMarks()
        let ids = Self.ids(4)
        for id in ids.prefix(3) { _ = marks.insert(id, limit: 3) }
        // Made again: now the newest, so ses_1 is the oldest.
        let remade = marks.insert(ids[0], limit: 3)
        let removed = marks.remove(ids[2]), removedAgain = marks.remove(ids[2])
        let intoTheRoom = marks.insert(ids[3], limit: 3)
        let pastTheLimit = marks.insert(ids[2], limit: 3)
        #expect(remade == 0)
        #expect(removed && !removedAgain)
        #expect(intoTheRoom == 0, "room left by the removal")
        #expect(pastTheLimit == 1)
        #expect(!marks.contains(ids[1]))
        #expect(marks.contains(ids[0]) && marks.contains(ids[2]) && marks.contains(ids[3]))
    }

    @Test func manyMarksMadeAndRemovedKeepTheOrderAndTheBound() {
        var marks = HeldDropMarks()
        let ids = Self.ids(1_000)
        var forgotten = 0
        for (index, id) in ids.enumerated() {
            forgotten += marks.insert(id, limit: 100)
            // Every other mark is read (removed) at once: the others stay, oldest first.
            if index % 2 == 0 {
                let removed = marks.remove(id)
                #expect(removed)
            }
        }
        #expect(marks.count == 100)
        #expect(forgotten == 500 - 100)
        // The newest hundred of the odd ones stay.
        let kept = ids.enumerated().filter { $0.offset % 2 == 1 }.map(\.element).suffix(100)
        #expect(kept.allSatisfy(marks.contains))
        for id in kept { marks.remove(id) }
        #expect(marks.isEmpty)
    }
}
