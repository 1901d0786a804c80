@testable import PanesCore
import Testing

/// `DenseTable`: values found by key after insertions, replacements and removals, across
/// chunk boundaries; a key keeps its slot while held and a removed key's slot is reused;
/// changes made in place stay.
@Suite struct DenseTableTests {
    @Test func valuesAreFoundByKeyAndReplacedInPlace() {
        var table = DenseTable<String, Pair<String, Int>>()
        #expect(table.isEmpty && table["a"]?.value == nil)
        #expect(table.updateValue(Pair("a", 1))?.value == nil)
        #expect(table.updateValue(Pair("b", 2))?.value == nil)
        #expect(table.updateValue(Pair("a", 10))?.value == 1)
        #expect(table.count == 2 && table["a"]?.value == 10 && table["b"]?.value == 2)
        #expect(Set(table.keys) == ["a", "b"] && table.values.map(\.value) == [10, 2])
    }

    @Test func aRemovedKeyIsGoneAndItsSlotIsReused() {
        var table = DenseTable<String, Pair<String, Int>>()
        table.updateValue(Pair("a", 1))
        table.updateValue(Pair("b", 2))
        table.updateValue(Pair("c", 3))
        #expect(table.removeValue(forKey: "b")?.value == 2)
        #expect(table.removeValue(forKey: "b") == nil)
        #expect(table["b"]?.value == nil && table.count == 2)
        // The next value takes b's slot, between a's and c's.
        table.updateValue(Pair("d", 4))
        #expect(table.values.map(\.value) == [1, 4, 3] && table.count == 3)
    }

    /// A hint is only a hint: a slot that no longer holds the key (freed, reused by another key,
    /// never used, negative) changes the key's own value, found by its hash, or nothing.
    @Test func modifyThroughAHintChangesTheKeysValueWhereverItIs() {
        var table = DenseTable<String, Pair<String, Int>>()
        for (index, key) in ["a", "b", "c"].enumerated() { table.updateValue(Pair(key, index)) }
        let b = table.slot(of: "b")!
        #expect(table.modify("b", hint: b) { $0.value += 10; return $0.value } == 11)
        #expect(table.modify("a", hint: b) { $0.value += 10; return $0.value } == 10, "b's slot, not a's")
        table.removeValue(forKey: "b")
        table.updateValue(Pair("d", 3))  // takes b's slot
        #expect(table.slot(of: "d") == b)
        #expect(table.modify("b", hint: b) { $0.value += 10; return $0.value } == nil)
        for hint: DenseTable<String, Pair<String, Int>>.Slot? in [nil, -1, 999, b] {
            #expect(table.modify("c", hint: hint) { $0.value += 1; return $0.value } != nil)
        }
        #expect(table["a"]?.value == 10 && table["c"]?.value == 6 && table["d"]?.value == 3 && table["b"] == nil)
    }

    @Test func modifyChangesTheValueInPlaceAndSkipsAMissingKey() {
        var table = DenseTable<String, Pair<String, [Int]>>()
        table.updateValue(Pair("a", [1]))
        let count = table.modify("a") { list in
            list.value.append(2)
            return list.value.count
        }
        var called = false
        let missing: Int? = table.modify("z") { _ in
            called = true
            return 0
        }
        #expect(count == 2 && table["a"]?.value == [1, 2] && missing == nil && !called)
    }

    @Test func manyValuesAcrossChunksStayFoundAfterRemovalsAndReuse() {
        let size = DenseTable<Int, Pair<Int, Int>>.chunkSize
        var table = DenseTable<Int, Pair<Int, Int>>()
        var expected: [Int: Int] = [:]
        for key in 0..<(3 * size + 7) {
            table.updateValue(Pair(key, key * 10))
            expected[key] = key * 10
        }
        for key in stride(from: 0, to: 3 * size + 7, by: 3) {
            #expect(table.removeValue(forKey: key)?.value == key * 10)
            expected[key] = nil
        }
        for key in 10_000..<(10_000 + size) {
            table.updateValue(Pair(key, key))
            expected[key] = key
        }
        // A key past the first chunk that is still held (every third one was removed).
        let changed = (size + 1...size + 3).first { $0 % 3 != 0 }!
        table.modify(changed) { $0.value = -1 }
        expected[changed] = -1
        #expect(table.count == expected.count)
        #expect(expected.allSatisfy { table[$0.key]?.value == $0.value })
        #expect(Set(table.keys) == Set(expected.keys))
        #expect(table.values.map(\.value).sorted() == expected.values.sorted())
    }

    @Test func aKeyKeepsItsSlotWhileHeldAndAFreedSlotGoesToTheNextKey() {
        var table = DenseTable<String, Pair<String, Int>>()
        let a = table.put(Pair("a", 1))
        let b = table.put(Pair("b", 2))
        let replaced = table.put(Pair("a", 3))
        #expect(a.slot != b.slot && replaced.slot == a.slot && replaced.previous?.value == 1)
        #expect(table.slot(of: "a") == a.slot && table[slot: a.slot].value == 3 && table[slot: b.slot].value == 2)
        let removed = table.remove("a")
        #expect(removed?.slot == a.slot && removed?.value.value == 3 && table.slot(of: "a") == nil && table.remove("a") == nil)
        let c = table.put(Pair("c", 4))
        #expect(c.slot == a.slot && table[slot: c.slot].value == 4 && table["c"]?.value == 4)
    }

    /// `read` (and every look-up, which reads each probed key where it is kept) finds what the
    /// subscript's copy holds, for records whose optional is laid out with a tag byte after them
    /// (`Int`s: no spare bits) and without one (a `String` key), across chunks, after removals
    /// and reuse; nothing for a key not held.
    @Test func readFindsWhatACopyHoldsWhateverTheRecordsLayout() {
        #expect(MemoryLayout<Pair<Int, Int>?>.size > MemoryLayout<Pair<Int, Int>>.size)
        #expect(MemoryLayout<Pair<String, [Int]>?>.size == MemoryLayout<Pair<String, [Int]>>.size)
        let count = 3 * DenseTable<Int, Pair<Int, Int>>.chunkSize + 5
        var numbers = DenseTable<Int, Pair<Int, Int>>()
        var lists = DenseTable<String, Pair<String, [Int]>>()
        for key in 0..<count {
            numbers.updateValue(Pair(key, key * 7))
            lists.updateValue(Pair("k\(key)", [key, -key]))
        }
        for key in stride(from: 1, to: count, by: 4) {
            numbers.removeValue(forKey: key)
            lists.removeValue(forKey: "k\(key)")
        }
        for key in count..<(count + 3) {  // into freed slots
            numbers.updateValue(Pair(key, key * 7))
            lists.updateValue(Pair("k\(key)", [key, -key]))
        }
        for key in 0..<(count + 5) {
            #expect(numbers.read(key) { $0.value } == numbers[key]?.value)
            #expect(numbers.read(key) { $0.key } == numbers[key]?.key)
            #expect(lists.read("k\(key)") { $0.value } == lists["k\(key)"]?.value)
            let held = key < count + 3 && (key >= count || key % 4 != 1)
            #expect((numbers.read(key) { _ in true } ?? false) == held)
            #expect((lists.read("k\(key)") { $0.key == "k\(key)" } ?? false) == held)
        }
    }

    @Test func aCopyIsIndependentOfLaterChanges() {
        var table = DenseTable<String, Pair<String, Int>>()
        table.updateValue(Pair("a", 1))
        let copy = table
        table.modify("a") { $0.value = 2 }
        table.removeValue(forKey: "a")
        #expect(copy["a"]?.value == 1 && table["a"]?.value == nil)
    }
}

/// A record found by its key, for these tests.
struct Pair<Key: SlotKey & Sendable, Value: Sendable & Equatable>: TableRecord, Equatable {
    let key: Key
    var value: Value
    init(_ key: Key, _ value: Value) {
        self.key = key
        self.value = value
    }
    var tableKey: Key { key }
}

// The keys these tests use hash as any key a client could choose does (`SlotKey`'s default).
extension String: SlotKey {}
extension Int: SlotKey {}
