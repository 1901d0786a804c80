@testable import PanesCore
import Testing

/// `SlotIndex`: keys read back from their records are found after insertions and removals,
/// through growth, tombstones and their reuse, and the rebuilds that clear them.
@Suite struct SlotIndexTests {
    /// Records by slot: the key each slot holds now (nil: free).
    struct Records {
        var keys: [Int32: String] = [:]
        func key(_ slot: Int32) -> String { keys[slot]! }
    }

    @Test func keysAreFoundUntilRemovedAndOthersAreNot() {
        var index = SlotIndex<String>()
        var records = Records()
        #expect(index.slot(of: "a") { records.key($0) } == nil)
        for slot in Int32(0)..<3 {
            records.keys[slot] = "k\(slot)"
            let held = records
            #expect(index.slot(of: "k\(slot)", orInsert: slot) { held.key($0) } == slot)
        }
        // Held: the slot held comes back and nothing is added.
        #expect(index.slot(of: "k1", orInsert: 9) { records.key($0) } == 1 && index.count == 3)
        #expect(index.slot(of: "k2") { records.key($0) } == 2 && index.slot(of: "k9") { records.key($0) } == nil)
        #expect(index.remove("k1") { records.key($0) } == 1 && index.remove("k1") { records.key($0) } == nil)
        records.keys[1] = nil
        #expect(index.slot(of: "k1") { records.key($0) } == nil && index.count == 2)
        #expect(Set(index.slots) == [0, 2])
    }

    @Test func manyInsertionsAndRemovalsAgreeWithADictionary() {
        // Colliding probes, tombstones reused and rebuilt away: a churn of 20,000 operations on
        // up to 3,000 keys, checked against a dictionary after each step that changes it.
        var index = SlotIndex<String>()
        var records = Records()
        var expected: [String: Int32] = [:]
        var free: [Int32] = []
        var next: Int32 = 0
        var state: UInt64 = 27
        func random(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for step in 0..<20_000 {
            let key = "key-\(random(3_000))"
            if let slot = expected[key], random(3) == 0 {
                let held = records
                #expect(index.remove(key) { held.key($0) } == slot)
                records.keys[slot] = nil
                expected[key] = nil
                free.append(slot)
            } else if expected[key] == nil {
                let slot = free.popLast() ?? { defer { next += 1 }; return next }()
                records.keys[slot] = key
                let held = records
                #expect(index.slot(of: key, orInsert: slot) { held.key($0) } == slot)
                expected[key] = slot
            }
            if step % 997 == 0 {
                #expect(index.count == expected.count)
                #expect(expected.allSatisfy { index.slot(of: $0.key) { records.key($0) } == $0.value })
                #expect(index.slot(of: "absent") { records.key($0) } == nil)
            }
        }
        #expect(index.count == expected.count && Set(index.slots) == Set(expected.values))
        #expect(expected.allSatisfy { index.slot(of: $0.key) { records.key($0) } == $0.value })
    }
}
