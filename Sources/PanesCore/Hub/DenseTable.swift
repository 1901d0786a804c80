/// A record kept in a `DenseTable`: the key it is found by, which the record holds anyway.
protocol TableRecord: Sendable {
    associatedtype Key: SlotKey & Sendable
    var tableKey: Key { get }
}

/// A table from keys to records that keeps each record once, in a numbered slot of fixed-size
/// chunks, and hashes only the key to its slot number.
///
/// Why not a `Dictionary<Key, Value>`: a Swift dictionary keeps its values inline in a hash
/// table that grows by doubling at three quarters full, so at 10,000 scenes it holds 16,384
/// buckets of the whole value (a `SceneSession` is over 150 bytes), 40 % of them empty, and
/// every bucket's page is touched. Here the hash table (`SlotIndex`) holds a 4-byte slot
/// number and one byte of the key's hash, and reads each key from its record (`TableRecord.tableKey`); values fill small
/// chunks of `chunkSize` slots in order, so at most one chunk is partly empty. Growing past the first
/// chunk never copies a value (later chunks are made whole, once); the first grows as an
/// array does, so a small table stays small. A slot freed by a removal is reused by the next
/// insertion (last freed first).
///
/// A key's slot number stays the same while it is held (a replaced value takes its slot), so
/// other indexes may keep slot numbers (4 bytes) instead of keys (`Scenes`' per-user sets and
/// live-scene index). The order of `values` is slot order, which reuse makes arbitrary:
/// callers that need an order sort.
struct DenseTable<Key, Value: TableRecord>: Sendable where Value.Key == Key {
    /// A held key's place: valid until the key is removed, then given to another.
    typealias Slot = Int32

    /// Slots a chunk holds once full: 32 records of 70–150 bytes make chunks of 2.3–4.6 KiB,
    /// whose array header and malloc's (40 bytes) cost a record 1.3 bytes (5 at 8 a chunk).
    /// Chunks were 8 (~1.2 KiB) to fit the ~2 KiB holes each connection lws accepted left
    /// between the blocks it keeps (chunks of 256, ~39 KiB, never fit one: an idle scene's RSS
    /// was 0.3 KiB higher); since lws' header tables have a region of their own
    /// (`CLibWebSocketsAlloc`) those holes are gone (issue 27).
    static var chunkSize: Int { 32 }

    private var index = SlotIndex<Key>()
    private var chunks: [ContiguousArray<Value?>] = []
    /// Slots emptied by removals, to fill before any new one.
    private var free: [Int32] = []

    init() {}

    /// How many keys it holds.
    var count: Int { index.count }
    var isEmpty: Bool { index.count == 0 }

    /// Its keys, in no particular order.
    var keys: some Sequence<Key> { values.lazy.map(\.tableKey) }

    /// Its values, in slot order.
    var values: some Sequence<Value> { chunks.lazy.joined().compactMap { $0 } }

    subscript(key: Key) -> Value? {
        guard let slot = slot(of: key) else { return nil }
        return self[entry: slot]
    }

    /// The slot of a held key.
    func slot(of key: Key) -> Slot? { index.slot(of: key, keyAt: keyAt) }

    /// The key of the record in a held slot, for `index`: read where the record is kept
    /// (`borrow`). Through `self[entry:]` every probe copied the whole record out and destroyed
    /// it again (a record holding an identifier copies through the runtime's generic witnesses),
    /// ~700 instructions a look-up of a `Connection` (issue 27).
    private func keyAt(_ slot: Slot) -> Key { borrow(slot) { $0.tableKey } }

    /// Calls `body` with the record in a held slot where it is kept, not a copy of it. A slot
    /// holds a `Value?` that is not nil, and an optional's payload is laid out at its start
    /// (a tag, when it needs one, comes after it), so the slot is read as the `Value` it holds.
    @inline(__always)
    private func borrow<R>(_ slot: Slot, _ body: (borrowing Value) -> R) -> R {
        chunks[Int(slot) / Self.chunkSize].withUnsafeBufferPointer { chunk in
            // The checks `self[entry: slot]!` made: if the index and the records ever disagreed,
            // a crash here rather than a read of memory that holds no record.
            let offset = Int(slot) % Self.chunkSize
            precondition(offset < chunk.count, "DenseTable: a held slot past its chunk")
            assert(chunk[offset] != nil, "DenseTable: a held slot without a record")
            return (chunk.baseAddress! + offset).withMemoryRebound(to: Value.self, capacity: 1) {
                body($0.pointee)
            }
        }
    }

    /// What `body` reads of the key's record, read where it is kept (no copy of the whole
    /// record, as `self[key]` makes); nil when the key is not held.
    func read<R>(_ key: Key, _ body: (borrowing Value) -> R) -> R? {
        guard let slot = slot(of: key) else { return nil }
        return borrow(slot, body)
    }

    /// The value in a slot that a key holds now (`slot(of:)`, `put`).
    subscript(slot slot: Slot) -> Value { self[entry: slot]! }

    /// The value in a slot, if a key holds it now (any slot number: nil for one never used).
    func value(inSlot slot: Slot) -> Value? {
        guard slot >= 0, Int(slot) / Self.chunkSize < chunks.count,
              Int(slot) % Self.chunkSize < chunks[Int(slot) / Self.chunkSize].count else { return nil }
        return self[entry: slot]
    }

    private subscript(entry slot: Int32) -> Value? {
        get { chunks[Int(slot) / Self.chunkSize][Int(slot) % Self.chunkSize] }
        _modify { yield &chunks[Int(slot) / Self.chunkSize][Int(slot) % Self.chunkSize] }
    }

    /// Keeps `value` under its key, in place of the value it had. Returns that value, if any.
    @discardableResult
    mutating func updateValue(_ value: Value) -> Value? {
        put(value).previous
    }

    /// Keeps `value` under its key, in the slot the key had (a new one if it had none). Returns
    /// the slot and the value it replaced, if any.
    @discardableResult
    mutating func put(_ value: Value) -> (slot: Slot, previous: Value?) {
        // One hash of the key whether it is new or held: the slot a new key would take is
        // offered to the index, and the value placed there only if the index took it.
        let next = free.last ?? Slot(chunks.isEmpty ? 0 : (chunks.count - 1) * Self.chunkSize + chunks[chunks.count - 1].count)
        let slot = withIndex { index, keyAt in index.slot(of: value.tableKey, orInsert: next, keyAt: keyAt) }
        guard slot == next else {
            defer { self[entry: slot] = value }
            return (slot, self[entry: slot])
        }
        place(value)
        return (slot, nil)
    }

    /// Runs `body` on the index, moved out of the table meanwhile, so that it may read keys from
    /// the records while it changes.
    private mutating func withIndex<R>(_ body: (inout SlotIndex<Key>, (Slot) -> Key) -> R) -> R {
        var index = SlotIndex<Key>()
        swap(&index, &self.index)
        defer { swap(&index, &self.index) }
        return body(&index, { self.keyAt($0) })
    }

    /// Forgets `key`; its slot is reused by a later insertion. Returns its value, if any.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        remove(key)?.value
    }

    /// Forgets `key`; its slot is reused by a later insertion. Returns the slot it had and its
    /// value, if any.
    mutating func remove(_ key: Key) -> (slot: Slot, value: Value)? {
        guard let slot = withIndex({ index, keyAt in index.remove(key, keyAt: keyAt) }) else { return nil }
        defer {
            self[entry: slot] = nil
            free.append(slot)
        }
        return (slot, self[entry: slot]!)
    }

    /// Changes the key's value in place. Nil (and `body` not called) when the key is not held.
    @discardableResult
    mutating func modify<R>(_ key: Key, _ body: (inout Value) -> R) -> R? {
        guard let slot = slot(of: key) else { return nil }
        return body(&self[entry: slot]!)
    }

    /// `modify(_:_:)` through `hint`, a slot the key held a moment ago (`slot(of:)`): when it
    /// still holds the key (its record's key read and compared, not hashed) the value is changed
    /// there, else found through the index.
    @discardableResult
    mutating func modify<R>(_ key: Key, hint: Slot?, _ body: (inout Value) -> R) -> R? {
        if let hint, hint >= 0, Int(hint) / Self.chunkSize < chunks.count,
           Int(hint) % Self.chunkSize < chunks[Int(hint) / Self.chunkSize].count,
           chunks[Int(hint) / Self.chunkSize][Int(hint) % Self.chunkSize]?.tableKey == key {
            return body(&self[entry: hint]!)
        }
        return modify(key, body)
    }

    /// Changes the value in a slot that a key holds now (`slot(of:)`, `put`), in place.
    mutating func modify<R>(slot: Slot, _ body: (inout Value) -> R) -> R {
        body(&self[entry: slot]!)
    }

    /// Puts a value in the last freed slot, or in a new one at the end (a new chunk when the
    /// last is full): the slot `put` computed as next.
    private mutating func place(_ value: Value) {
        if let slot = free.popLast() {
            self[entry: slot] = value
            return
        }
        if chunks.isEmpty || chunks[chunks.count - 1].count == Self.chunkSize {
            var chunk = ContiguousArray<Value?>()
            // The first chunk grows as an array does, so a small table stays small; later ones
            // are made whole, once.
            if !chunks.isEmpty { chunk.reserveCapacity(Self.chunkSize) }
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(value)
    }
}
