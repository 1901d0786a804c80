@testable import PanesTransport
import Testing

/// `ConnectionTable` against a `Dictionary` doing the same: whatever the keys (consecutive
/// numbers as the transport hands them out, scattered ones, 0) and whatever the order of
/// insertions, changes and removals, it holds what the dictionary holds.
@Suite struct ConnectionTableTests {
    /// SplitMix64: a fixed sequence, so a failure repeats.
    struct Numbers {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    func expectSame(_ table: ConnectionTable<String>, _ reference: [UInt64: String], _ keys: some Sequence<UInt64>,
                    _ step: Int) {
        #expect(table.count == reference.count, "step \(step)")
        #expect(table.isEmpty == reference.isEmpty, "step \(step)")
        for key in keys where table[key] != reference[key] {
            Issue.record("step \(step): key \(key) is \(table[key] ?? "absent"), not \(reference[key] ?? "absent")")
            return
        }
    }

    /// Connections opening in order and closing in any order, as in a storm and its drain:
    /// every removal moves the entries probed past it, and every key stays found.
    @Test func consecutiveNumbersOpeningAndClosingInAnyOrder() {
        var table = ConnectionTable<String>()
        var reference: [UInt64: String] = [:]
        var numbers = Numbers(state: 1)
        var next: UInt64 = 1
        var open: [UInt64] = []
        for step in 0..<20_000 {
            if open.isEmpty || numbers.next() % 3 != 0 {
                table[next] = "c\(next)"
                reference[next] = "c\(next)"
                open.append(next)
                next += 1
            } else {
                let key = open.remove(at: Int(numbers.next() % UInt64(open.count)))
                table[key] = nil
                reference[key] = nil
            }
            if step % 997 == 0 { expectSame(table, reference, 0...next, step) }
        }
        expectSame(table, reference, 0...next, 20_000)
        for key in open {
            table[key] = nil
            reference[key] = nil
        }
        expectSame(table, reference, 0...next, 20_001)
        #expect(table.isEmpty)
    }

    /// Scattered keys, 0 among them, and `update` used to read, change, add and remove.
    @Test func scatteredKeysThroughUpdate() {
        var table = ConnectionTable<String>()
        var reference: [UInt64: String] = [:]
        var numbers = Numbers(state: 42)
        var keys: [UInt64] = [0, 1, UInt64.max, 1 << 63]
        for _ in 0..<300 { keys.append(numbers.next()) }
        for _ in 0..<300 { keys.append(numbers.next() % 64) }  // many collisions among few
        for step in 0..<30_000 {
            let key = keys[Int(numbers.next() % UInt64(keys.count))]
            let action = numbers.next() % 4
            let seen = table.update(key) { value -> String? in
                let before = value
                switch action {
                case 0: value = nil
                case 1: value = (value ?? "") + "+"
                case 2: value = "\(step)"
                default: break  // read only
                }
                return before
            }
            #expect(seen == reference[key], "step \(step): key \(key) read \(seen ?? "absent")")
            switch action {
            case 0: reference[key] = nil
            case 1: reference[key] = (reference[key] ?? "") + "+"
            case 2: reference[key] = "\(step)"
            default: break
            }
            if step % 1_009 == 0 { expectSame(table, reference, keys, step) }
        }
        expectSame(table, reference, keys, 30_000)
    }

    /// Where a key sits is not a function of the key alone: two tables given the same
    /// connection numbers lay them out differently (each draws its own seed), so a peer that
    /// keeps open only connections it guesses are neighbours gains nothing. With one seed, two
    /// tables agree, and a table seeded 0 still holds what a dictionary holds.
    @Test func whereAKeySitsDependsOnTheTablesSeed() {
        func layout(_ table: ConnectionTable<String>) -> [UInt64] {
            (1...48).map { UInt64(table.home($0)) }
        }
        func filled(_ table: ConnectionTable<String>) -> ConnectionTable<String> {
            var table = table
            for key in UInt64(1)...48 { table[key] = "c\(key)" }
            return table
        }
        let first = filled(ConnectionTable()), second = filled(ConnectionTable())
        #expect(first.keys.count == second.keys.count)
        #expect(layout(first) != layout(second))
        #expect(layout(filled(ConnectionTable(seed: 7))) == layout(filled(ConnectionTable(seed: 7))))
        let zero = filled(ConnectionTable(seed: 0))
        #expect((1...48).allSatisfy { zero[UInt64($0)] == "c\($0)" })
    }

    /// Reading an absent key changes nothing, in an empty table too; `update` changes a value
    /// where it is held.
    @Test func readingAbsentKeysAndChangingInPlace() {
        var table = ConnectionTable<[Int]>()
        #expect(table[5] == nil && table.isEmpty)
        table.update(5) { _ in }
        #expect(table.isEmpty)
        table[5] = [1]
        table.update(5) { $0!.append(2) }
        #expect(table[5] == [1, 2] && table.count == 1)
        table.update(6) { _ in }
        #expect(table[6] == nil && table.count == 1)
    }
}
