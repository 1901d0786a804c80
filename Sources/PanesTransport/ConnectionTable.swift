// Threading: a value type; each table is touched by its owner's thread only (the service
// thread, for the transport's connections and the runtime's request timings).

/// A table from connection numbers to values: what the transport keeps per connection
/// (`WebSocketServer.connections`) and the runtime's request timings (`RuntimeMetrics`), each
/// looked up several times a resume.
///
/// Why not a `Dictionary<UInt64, Value>`: a dictionary hashes every key with SipHash, seeded
/// per process so that keys an attacker picks cannot pile into one bucket, and its hashing
/// was a few hundred instructions of every resume. Connection numbers are the transport's own
/// (1, 2, 3, … in the order connections open), so here a key is spread by one multiplication
/// (Fibonacci hashing: consecutive numbers land far apart) and found by linear probing in a
/// table kept at most three quarters full, as a dictionary is. No peer chooses its number, but
/// a peer does choose which of its connections stay open, and the numbers are easy to guess
/// on a quiet server: were the slots a function of the number alone, it could keep only those
/// whose slots are side by side and make every lookup landing there walk all of them. So each
/// table mixes a random seed of its own into the key first (one exclusive or, which keeps the
/// spread of consecutive numbers); which connections share a run of slots is then not
/// knowable from outside. The per-peer connection limits bound such a run anyway. A removal
/// moves the entries after it back into the hole (no tombstones), so probes stay short however
/// many connections came and went. Like a dictionary it keeps its capacity when emptied.
///
/// Inlinable, as the standard library's collections are: the runtime's table is used from
/// another module, where an unspecialised generic would go through value witnesses.
public struct ConnectionTable<Value> {
    /// 0 marks an empty slot; key 0 itself is kept in `zero`.
    @usableFromInline var keys: [UInt64] = []
    @usableFromInline var values: [Value?] = []
    @usableFromInline var zero: Value?
    /// 64 less log2 of the capacity: a key's home slot is the top bits of its product.
    @usableFromInline var shift: UInt64 = 64
    @usableFromInline var held = 0
    /// Mixed into every key before it is spread (see the type's doc).
    @usableFromInline let seed: UInt64

    /// How many keys it holds.
    @inlinable
    public var count: Int { held }

    @inlinable
    public init() { seed = .random(in: .min ... .max) }

    /// With a seed chosen by the caller, for tests.
    init(seed: UInt64) { self.seed = seed }

    @inlinable
    public var isEmpty: Bool { held == 0 }

    @inlinable
    public subscript(key: UInt64) -> Value? {
        get {
            if key == 0 { return zero }
            guard let index = find(key).found else { return nil }
            return values[index]
        }
        set { update(key) { $0 = newValue } }
    }

    /// Reads, changes, adds or removes `key`'s value with one probe: `body` gets the value (nil
    /// when absent) and leaves it as it should be (nil to remove). The value is moved out
    /// while `body` runs, so a value holding a buffer is changed in place, not copied.
    @inlinable @discardableResult
    public mutating func update<R>(_ key: UInt64, _ body: (inout Value?) -> R) -> R {
        if key == 0 {
            let wasHeld = zero != nil
            let result = body(&zero)
            held += (zero != nil ? 1 : 0) - (wasHeld ? 1 : 0)
            return result
        }
        let (found, empty) = find(key)
        var value: Value?
        if let found { swap(&value, &values[found]) }
        let result = body(&value)
        // Moved back by swapping, not copied: no retain and release of what the value holds.
        if let found {
            if value != nil { swap(&value, &values[found]) } else { remove(at: found) }
        } else if value != nil {
            insert(key, &value, at: empty)
        }
        return result
    }

    @inlinable
    var mask: Int { keys.count - 1 }

    @inlinable
    func home(_ key: UInt64) -> Int { Self.home(key, seed: seed, shift: shift) }

    @inlinable
    static func home(_ key: UInt64, seed: UInt64, shift: UInt64) -> Int {
        Int(truncatingIfNeeded: ((key ^ seed) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The slot holding `key`, or else the empty slot its probe ended at (nil while the table
    /// has no slots). A key other than 0.
    @inlinable
    func find(_ key: UInt64) -> (found: Int?, empty: Int?) {
        guard !keys.isEmpty else { return (nil, nil) }
        var index = home(key)
        while true {
            let occupant = keys[index]
            if occupant == key { return (index, nil) }
            if occupant == 0 { return (nil, index) }
            index = (index + 1) & mask
        }
    }

    /// `key` (absent, not 0) with `value`, moved in (left nil), into `slot`, the empty slot its
    /// probe ended at, unless the table must grow first.
    @inlinable
    mutating func insert(_ key: UInt64, _ value: inout Value?, at slot: Int?) {
        var slot = slot
        if slot == nil || (held + 1) * 4 > keys.count * 3 {
            grow()
            slot = find(key).empty
        }
        keys[slot!] = key
        swap(&values[slot!], &value)
        held += 1
    }

    /// Empties `slot`, then moves back each entry after it that may sit in the hole (its home
    /// is not between the hole and where it is), so every key stays reachable from its home.
    @inlinable
    mutating func remove(at slot: Int) {
        var hole = slot
        var index = (slot + 1) & mask
        while keys[index] != 0 {
            let distance = (index - home(keys[index])) & mask
            if distance >= (index - hole) & mask {
                keys[hole] = keys[index]
                values.swapAt(hole, index)
                hole = index
            }
            index = (index + 1) & mask
        }
        keys[hole] = 0
        values[hole] = nil
        held -= 1
    }

    /// Doubles the slots (8 at first) and moves every entry to its place in them, through the
    /// arrays' buffers (a storm grows the table a dozen times).
    @inlinable
    mutating func grow() {
        let capacity = max(keys.count * 2, 8)
        let newShift = UInt64(64 - capacity.trailingZeroBitCount)
        let newMask = capacity - 1
        let seed = seed
        var newKeys = [UInt64](repeating: 0, count: capacity)
        var newValues = [Value?](repeating: nil, count: capacity)
        newKeys.withUnsafeMutableBufferPointer { newKeys in
            newValues.withUnsafeMutableBufferPointer { newValues in
                keys.withUnsafeBufferPointer { oldKeys in
                    values.withUnsafeMutableBufferPointer { oldValues in
                        for index in oldKeys.indices where oldKeys[index] != 0 {
                            var slot = Self.home(oldKeys[index], seed: seed, shift: newShift)
                            while newKeys[slot] != 0 { slot = (slot + 1) & newMask }
                            newKeys[slot] = oldKeys[index]
                            swap(&newValues[slot], &oldValues[index])
                        }
                    }
                }
            }
        }
        keys = newKeys
        values = newValues
        shift = newShift
    }
}
