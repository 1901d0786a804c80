/// A hash index from keys to slot numbers that holds only the slots: each key is read back from
/// the record in its slot (`keyAt`), where the records keep it anyway.
///
/// Why not a `[Key: Slot]`: a dictionary keeps a copy of every key beside its slot, 20 bytes
/// a bucket for a 16-byte id (28 for an `InlineIdentifier`), and grows by doubling at three
/// quarters full, so at 10,000 scenes each such index held about 33 bytes a scene. Here a
/// bucket is the 4-byte slot and a byte of the key's hash (about 8 bytes a scene at the same
/// load). The byte spares reading a record (a copy of it) for all but about one key in 256 that
/// shares a probe sequence without being the key looked for.
///
/// Each key is hashed by its `SlotKey.slotHash`: the server's own identifiers without SipHash.
/// Open addressing with linear probing; a removed entry leaves a tombstone (or, when the next
/// bucket is empty, simply an empty bucket), which an insertion reuses, and the buckets are rebuilt (hashing every key again) when tombstones and entries
/// together pass three quarters. Every call that looks for a key passes the same `keyAt`, which
/// must give the key of each slot the index holds.
struct SlotIndex<Key: SlotKey>: Sendable {
    typealias Slot = Int32

    private static var empty: Slot { -1 }
    private static var removed: Slot { -2 }

    /// A power of two long, or empty.
    private var buckets: [Slot] = []
    /// Each bucket's byte of its key's hash (`tag`), as long as `buckets`.
    private var tags: [UInt8] = []
    /// Slots held.
    private(set) var count = 0
    /// Buckets that hold a tombstone.
    private var tombstones = 0

    init() {}

    /// The byte of a hash kept beside its slot: bits the bucket number (the low ones) does not use.
    @inline(__always)
    private static func tag(_ hash: Int) -> UInt8 { UInt8(truncatingIfNeeded: hash >> 56) }

    /// The slot held for `key`.
    func slot(of key: Key, keyAt: (Slot) -> Key) -> Slot? {
        bucket(of: key, keyAt: keyAt).map { buckets[$0] }
    }

    /// The bucket that holds `key`'s slot.
    private func bucket(of key: Key, keyAt: (Slot) -> Key) -> Int? {
        guard count > 0 else { return nil }
        let mask = buckets.count - 1
        let hash = key.slotHash
        let tag = Self.tag(hash)
        var bucket = hash & mask
        while true {
            let slot = buckets[bucket]
            if slot == Self.empty { return nil }
            if slot >= 0, tags[bucket] == tag, keyAt(slot) == key { return bucket }
            bucket = (bucket + 1) & mask
        }
    }

    /// The slot held for `key`; when there is none, indexes `next` under it and returns `next`
    /// (the caller then puts the key's record in that slot). One hash either way.
    mutating func slot(of key: Key, orInsert next: Slot, keyAt: (Slot) -> Key) -> Slot {
        if (count + tombstones + 1) * 4 > buckets.count * 3 { rebuild(keyAt: keyAt) }
        let mask = buckets.count - 1
        let hash = key.slotHash
        let tag = Self.tag(hash)
        var bucket = hash & mask
        var free: Int?
        while true {
            let slot = buckets[bucket]
            if slot == Self.empty { break }
            if slot >= 0 {
                if tags[bucket] == tag, keyAt(slot) == key { return slot }
            } else if free == nil {
                free = bucket
            }
            bucket = (bucket + 1) & mask
        }
        if let free {
            bucket = free
            tombstones -= 1
        }
        buckets[bucket] = next
        tags[bucket] = tag
        count += 1
        return next
    }

    /// Forgets `key`, while its record is still in its slot. Returns the slot it had.
    @discardableResult
    mutating func remove(_ key: Key, keyAt: (Slot) -> Key) -> Slot? {
        guard let bucket = bucket(of: key, keyAt: keyAt) else { return nil }
        let slot = buckets[bucket]
        // The next bucket empty: nothing probes past this one, so it can be empty too.
        if buckets[(bucket + 1) & (buckets.count - 1)] == Self.empty {
            buckets[bucket] = Self.empty
        } else {
            buckets[bucket] = Self.removed
            tombstones += 1
        }
        count -= 1
        return slot
    }

    /// The slots held, in no particular order.
    var slots: some Sequence<Slot> { buckets.lazy.filter { $0 >= 0 } }

    /// New buckets for the entries held: twice as many when they are more than half full,
    /// as many when tombstones took the room, and none left behind.
    private mutating func rebuild(keyAt: (Slot) -> Key) {
        var size = max(8, buckets.count)
        while (count + 1) * 2 > size { size *= 2 }
        let old = buckets
        buckets = [Slot](repeating: Self.empty, count: size)
        tags = [UInt8](repeating: 0, count: size)
        tombstones = 0
        let mask = size - 1
        for slot in old where slot >= 0 {
            let hash = keyAt(slot).slotHash
            var bucket = hash & mask
            while buckets[bucket] != Self.empty { bucket = (bucket + 1) & mask }
            buckets[bucket] = slot
            tags[bucket] = Self.tag(hash)
        }
    }
}
