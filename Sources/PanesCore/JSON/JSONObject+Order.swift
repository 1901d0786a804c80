/// Byte order of keys: how members are sorted, found and compared.
extension JSONObject {
    /// A key's first eight bytes, big-endian and zero-padded: two keys whose prefixes differ
    /// are in the order of their prefixes; equal prefixes need the rest compared (`order`).
    @inlinable static func prefix(_ key: String) -> UInt64 {
        key.utf8.withContiguousStorageIfAvailable { prefix(UnsafeRawBufferPointer($0)) } ?? slowPrefix(key)
    }

    /// The same for a key given as its bytes: one load when it has eight or more.
    @inlinable static func prefix(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        if bytes.count >= 8 { return UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)) }
        var value: UInt64 = 0
        var shift: UInt64 = 56
        for byte in bytes {
            value |= UInt64(byte) << shift
            shift &-= 8
        }
        return value
    }

    @usableFromInline static func slowPrefix(_ key: String) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 56
        for byte in key.utf8.prefix(8) {
            value |= UInt64(byte) << shift
            shift &-= 8
        }
        return value
    }

    /// Where `key` is in the members (found), or where it would go: a binary search.
    @inlinable func position(of key: String, prefix: UInt64) -> (index: Int, found: Bool) {
        members.withUnsafeBufferPointer { members in
            var low = 0, high = members.count
            while low < high {
                let middle = (low &+ high) >> 1
                let order = Self.order(members[middle], prefix, key)
                if order < 0 {
                    low = middle &+ 1
                } else if order > 0 {
                    high = middle
                } else {
                    return (middle, true)
                }
            }
            return (low, false)
        }
    }

    /// A member's key against `key` (whose prefix is `prefix`), by bytes: negative if the
    /// member's sorts first, zero if they are the same bytes.
    @inlinable static func order(_ member: Member, _ prefix: UInt64, _ key: String) -> Int {
        if member.prefix != prefix { return member.prefix < prefix ? -1 : 1 }
        let length = member.key.utf8.count, other = key.utf8.count
        // The same first eight bytes (zero-padded), and neither longer: the shorter sorts first.
        if length <= 8 && other <= 8 { return length == other ? 0 : (length < other ? -1 : 1) }
        return orderOfLongKeys(member.key, key)
    }

    /// Two keys' bytes compared past the first eight (equal already), eight at a time, then
    /// their lengths (`memcmp`'s order): large objects' keys often share long prefixes.
    @usableFromInline static func orderOfLongKeys(_ a: String, _ b: String) -> Int {
        let fast = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in order(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) }
        }
        if let fast, let fast { return fast }
        if a.utf8.elementsEqual(b.utf8) { return 0 }
        return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
    }

    static func order(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer) -> Int {
        let common = Swift.min(x.count, y.count)
        var offset = 8
        while offset + 8 <= common {
            let p = UInt64(bigEndian: x.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let q = UInt64(bigEndian: y.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            if p != q { return p < q ? -1 : 1 }
            offset += 8
        }
        while offset < common {
            if x[offset] != y[offset] { return x[offset] < y[offset] ? -1 : 1 }
            offset += 1
        }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }

    /// Sorts members by key bytes; returns a key found twice, if any.
    @usableFromInline static func sort(_ members: inout [Member]) -> String? {
        sortMembers(&members)
        var index = 1
        while index < members.count {
            if order(members[index - 1], members[index].prefix, members[index].key) == 0 { return members[index].key }
            index += 1
        }
        return nil
    }

    /// An insertion sort when small, as nearly every object is: each member moved out once
    /// and the greater ones moved up behind it, no copies (no retain or release).
    static func sortMembers(_ members: inout [Member]) {
        guard members.count <= 16 else {
            if !isSorted(members) { members.sort { order($0, $1.prefix, $1.key) < 0 } }
            return
        }
        members.withUnsafeMutableBufferPointer { members in
            guard let base = members.baseAddress else { return }
            var index = 1
            while index < members.count {
                if order(base[index - 1], base[index].prefix, base[index].key) > 0 {
                    let member = (base + index).move()
                    var slot = index
                    repeat {
                        (base + slot).moveInitialize(from: base + slot - 1, count: 1)
                        slot -= 1
                    } while slot > 0 && order(base[slot - 1], member.prefix, member.key) > 0
                    (base + slot).initialize(to: member)
                }
                index += 1
            }
        }
    }

    private static func isSorted(_ members: [Member]) -> Bool {
        for index in members.indices.dropFirst() where order(members[index - 1], members[index].prefix, members[index].key) > 0 {
            return false
        }
        return true
    }
}
