@testable import PanesCore
import Testing

/// `DenseTable`: values found by key after insertions, replacements and removals, across
/// chunk boundaries; a key keeps its slot while held and a removed key's slot is reused;
/// changes made in place stay.
@Suite struct DenseTableTests {
    @Test func valuesAreFoundByKeyAndReplacedInPlace() {
        var table = DenseTable<String, Int>()
        #expect(table.isEmpty && table["a"] == nil)
        #expect(table.updateValue(1, forKey: "a") == nil)
        #expect(table.updateValue(2, forKey: "b") == nil)
        #expect(table.updateValue(10, forKey: "a") == 1)
        #expect(table.count == 2 && table["a"] == 10 && table["b"] == 2)
        #expect(Set(table.keys) == ["a", "b"] && Array(table.values) == [10, 2])
    }

    @Test func aRemovedKeyIsGoneAndItsSlotIsReused() {
        var table = DenseTable<String, Int>()
        table.updateValue(1, forKey: "a")
        table.updateValue(2, forKey: "b")
        table.updateValue(3, forKey: "c")
        #expect(table.removeValue(forKey: "b") == 2)
        #expect(table.removeValue(forKey: "b") == nil)
        #expect(table["b"] == nil && table.count == 2)
        // The next value takes b's slot, between a's and c's.
        table.updateValue(4, forKey: "d")
        #expect(Array(table.values) == [1, 4, 3] && table.count == 3)
    }

    @Test func modifyChangesTheValueInPlaceAndSkipsAMissingKey() {
        var table = DenseTable<String, [Int]>()
        table.updateValue([1], forKey: "a")
        let count = table.modify("a") { list in
            list.append(2)
            return list.count
        }
        var called = false
        let missing: Int? = table.modify("z") { _ in
            called = true
            return 0
        }
        #expect(count == 2 && table["a"] == [1, 2] && missing == nil && !called)
    }

    @Test func manyValuesAcrossChunksStayFoundAfterRemovalsAndReuse() {
        let size = DenseTable<Int, Int>.chunkSize
        var table = DenseTable<Int, Int>()
        var expected: [Int: Int] = [:]
        for key in 0..<(3 * size + 7) {
            table.updateValue(key * 10, forKey: key)
            expected[key] = key * 10
        }
        for key in stride(from: 0, to: 3 * size + 7, by: 3) {
            #expect(table.removeValue(forKey: key) == key * 10)
            expected[key] = nil
        }
        for key in 10_000..<(10_000 + size) {
            table.updateValue(key, forKey: key)
            expected[key] = key
        }
        table.modify(size + 1) { $0 = -1 }
        expected[size + 1] = -1
        #expect(table.count == expected.count)
        #expect(expected.allSatisfy { table[$0.key] == $0.value })
        #expect(Set(table.keys) == Set(expected.keys))
        #expect(Array(table.values).sorted() == expected.values.sorted())
    }

    @Test func aKeyKeepsItsSlotWhileHeldAndAFreedSlotGoesToTheNextKey() {
        var table = DenseTable<String, Int>()
        let a = table.put(1, forKey: "a")
        let b = table.put(2, forKey: "b")
        let replaced = table.put(3, forKey: "a")
        #expect(a.slot != b.slot && replaced.slot == a.slot && replaced.previous == 1)
        #expect(table.slot(of: "a") == a.slot && table[slot: a.slot] == 3 && table[slot: b.slot] == 2)
        let removed = table.remove("a")
        #expect(removed?.slot == a.slot && removed?.value == 3 && table.slot(of: "a") == nil && table.remove("a") == nil)
        let c = table.put(4, forKey: "c")
        #expect(c.slot == a.slot && table[slot: c.slot] == 4 && table["c"] == 4)
    }

    @Test func aCopyIsIndependentOfLaterChanges() {
        var table = DenseTable<String, Int>()
        table.updateValue(1, forKey: "a")
        let copy = table
        table.modify("a") { $0 = 2 }
        table.removeValue(forKey: "a")
        #expect(copy["a"] == 1 && table["a"] == nil)
    }
}
