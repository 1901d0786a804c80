/// A JSON object: its members in one array, sorted by their keys' UTF-8 bytes.
///
/// Keys come from outside (a client's field names, a `userInfo`'s keys, a token's workspace
/// grants), so they are compared by their bytes, as identifiers are (CONCEPTS.md, invariant
/// 10): NFC `é` and NFD `e` + U+0301 are two keys, where a `[String: …]` would make them one.
/// A lookup is a binary search over each key's first eight bytes read once as a number
/// (`prefix`), so nearly every comparison is one integer comparison and no key is hashed; a
/// frame's objects have a handful of members, a `userInfo` may have thousands, and both are
/// logarithmic. The order is the one the encoder writes (jansson's `JSON_SORT_KEYS`: bytes),
/// so encoding walks the array, and equality and hashing, which pair members in that order,
/// do not depend on the order keys were given in.
///
/// Adding a key that sorts last appends; any other new key moves the members after it (a
/// `memmove`), so an object built key by key in no order is quadratic in its size (20,000 keys
/// about 0.1 s, bench/README.md): code that builds a large object from many keys at once uses
/// `init(uniqueKeysWithValues:)`, `merging`, `mapValues` or `filter`, which sort once or keep
/// the order.
public struct JSONObject: Sendable, Hashable, RandomAccessCollection {
    public typealias Element = (key: String, value: JSONValue)
    public typealias Index = Int

    @usableFromInline
    struct Member: Sendable {
        /// The key's first eight bytes, big-endian and zero-padded (`JSONObject.prefix`).
        @usableFromInline var prefix: UInt64
        @usableFromInline var key: String
        @usableFromInline var value: JSONValue

        @inlinable init(_ key: String, _ value: JSONValue) {
            prefix = JSONObject.prefix(key)
            self.key = key
            self.value = value
        }
    }

    /// Sorted by key bytes, no two keys with the same bytes.
    @usableFromInline var members: [Member]

    @inlinable public init() { members = [] }

    @inlinable init(sorted members: [Member]) { self.members = members }

    /// An object of these members; two keys with the same bytes are a programmer's error, as
    /// they are for `Dictionary(uniqueKeysWithValues:)`.
    public init<S: Sequence>(uniqueKeysWithValues pairs: S) where S.Element == (String, JSONValue) {
        var members: [Member] = []
        members.reserveCapacity(pairs.underestimatedCount)
        for (key, value) in pairs { members.append(Member(key, value)) }
        let duplicate = Self.sort(&members)
        precondition(duplicate == nil, "JSONObject(uniqueKeysWithValues:) got the key \(duplicate ?? "") twice")
        self.members = members
    }

    /// A dictionary's members (whose keys, unique as `String`s, are unique as bytes too).
    public init(_ dictionary: [String: JSONValue]) { self.init(uniqueKeysWithValues: dictionary.lazy.map { ($0.key, $0.value) }) }

    /// An object built from members in any order whose keys have different bytes (a JSON
    /// text's, which jansson has checked), sorted once at the end.
    public struct Builder: ~Copyable {
        @usableFromInline var members: [Member] = []

        @inlinable public init(capacity: Int) { members.reserveCapacity(capacity) }

        @inlinable public mutating func append(_ key: String, _ value: JSONValue) { members.append(Member(key, value)) }

        /// A key given as its UTF-8 bytes (valid UTF-8, as jansson checks): a field name the
        /// protocol uses is not made again (`knownKey`).
        public mutating func append(keyBytes: UnsafeRawBufferPointer, _ value: consuming JSONValue) {
            let prefix = JSONObject.prefix(keyBytes)
            let key = JSONObject.knownKey(keyBytes, prefix: prefix) ?? String(decoding: keyBytes, as: UTF8.self)
            members.append(Member(prefix: prefix, key: key, value: value))
        }

        /// The members sorted; the caller vouches that no two keys have the same bytes.
        public consuming func object() -> JSONObject {
            JSONObject.sortMembers(&members)
            return JSONObject(sorted: members)
        }

        /// The members sorted, or nil if two keys have the same bytes (`JSONFastReader` leaves
        /// such a text to jansson, which refuses it with its own words).
        public consuming func objectUnlessDuplicated() -> JSONObject? {
            JSONObject.sort(&members) == nil ? JSONObject(sorted: members) : nil
        }
    }

    // MARK: Collection

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { members.count }
    @inlinable public var count: Int { members.count }
    @inlinable public var isEmpty: Bool { members.isEmpty }
    @inlinable public subscript(position: Int) -> Element { (members[position].key, members[position].value) }

    // MARK: Keys

    @inlinable public subscript(key: String) -> JSONValue? {
        get {
            let (index, found) = position(of: key, prefix: Self.prefix(key))
            return found ? members[index].value : nil
        }
        set {
            let prefix = Self.prefix(key)
            let (index, found) = position(of: key, prefix: prefix)
            if let newValue {
                if found {
                    members[index].value = newValue
                } else if removeEquivalent(of: key) {
                    self[key] = newValue // where it goes now that its twin is gone
                } else {
                    members.insert(Member(prefix: prefix, key: key, value: newValue), at: index)
                }
            } else if found {
                members.remove(at: index)
            }
        }
    }

    @inlinable public subscript(key: String, default value: @autoclosure () -> JSONValue) -> JSONValue {
        get { self[key] ?? value() }
        set { self[key] = newValue }
    }

    /// Where a key is in the members, if the object has it (by bytes).
    @inlinable public func index(forKey key: String) -> Int? {
        let (index, found) = position(of: key, prefix: Self.prefix(key))
        return found ? index : nil
    }

    @inlinable @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        let (index, found) = position(of: key, prefix: Self.prefix(key))
        return found ? members.remove(at: index).value : nil
    }

    @inlinable @discardableResult
    public mutating func updateValue(_ value: JSONValue, forKey key: String) -> JSONValue? {
        let old = self[key]
        self[key] = value
        return old
    }

    /// The keys in byte order; `contains` compares bytes.
    @inlinable public var keys: Keys { Keys(members: members) }

    /// The values, in their keys' byte order.
    @inlinable public var values: Values { Values(members: members) }

    public struct Keys: RandomAccessCollection, Sendable {
        @usableFromInline let members: [Member]
        @inlinable init(members: [Member]) { self.members = members }
        @inlinable public var startIndex: Int { 0 }
        @inlinable public var endIndex: Int { members.count }
        @inlinable public subscript(position: Int) -> String { members[position].key }
        /// Whether the object has this key, by bytes (not `String ==`, which compares canonically).
        @inlinable public func contains(_ key: String) -> Bool {
            JSONObject(sorted: members).position(of: key, prefix: JSONObject.prefix(key)).found
        }
    }

    public struct Values: RandomAccessCollection, Sendable {
        @usableFromInline let members: [Member]
        @inlinable init(members: [Member]) { self.members = members }
        @inlinable public var startIndex: Int { 0 }
        @inlinable public var endIndex: Int { members.count }
        @inlinable public subscript(position: Int) -> JSONValue { members[position].value }
    }

    // MARK: Whole objects (order kept: no sorting)

    @inlinable public func mapValues(_ transform: (JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        JSONObject(sorted: try members.map { Member(prefix: $0.prefix, key: $0.key, value: try transform($0.value)) })
    }

    @inlinable public func compactMapValues(_ transform: (JSONValue) throws -> JSONValue?) rethrows -> JSONObject {
        JSONObject(sorted: try members.compactMap { member in
            try transform(member.value).map { Member(prefix: member.prefix, key: member.key, value: $0) }
        })
    }

    @inlinable public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> JSONObject {
        JSONObject(sorted: try members.filter { try isIncluded(($0.key, $0.value)) })
    }

    /// Both objects' members, in one pass over the two sorted arrays; `combine` picks the value
    /// of a key both have (this object's first). A key of `other` canonically equivalent to one
    /// of this object's in other bytes replaces it (JSONObject+Equivalence.swift).
    public func merging(_ other: JSONObject,
                        uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        var merged: [Member] = []
        merged.reserveCapacity(members.count + other.members.count)
        var left = 0, right = 0
        var arrivals: [Int] = [] // where the keys `other` adds went
        while left < members.count, right < other.members.count {
            let order = Self.order(members[left], other.members[right].prefix, other.members[right].key)
            if order < 0 {
                merged.append(members[left])
                left += 1
            } else if order > 0 {
                arrivals.append(merged.count)
                merged.append(other.members[right])
                right += 1
            } else {
                var member = members[left]
                member.value = try combine(member.value, other.members[right].value)
                merged.append(member)
                left += 1
                right += 1
            }
        }
        merged.append(contentsOf: members[left...])
        arrivals += merged.count..<(merged.count + other.members.count - right)
        merged.append(contentsOf: other.members[right...])
        Self.replaceEquivalents(in: &merged, arrivals: arrivals)
        return JSONObject(sorted: merged)
    }

    public mutating func merge(_ other: JSONObject, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue) rethrows {
        self = try merging(other, uniquingKeysWith: combine)
    }
}

extension JSONObject.Member {
    @inlinable init(prefix: UInt64, key: String, value: JSONValue) {
        self.prefix = prefix
        self.key = key
        self.value = value
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// A literal's members; of two with the same key bytes, the later one (as a value built key
    /// by key would keep).
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self.init(literal: elements) }

    /// Sized once and sorted once: every reply the server sends is built of these.
    init(literal elements: [(String, JSONValue)]) {
        var members: [Member] = []
        members.reserveCapacity(elements.count)
        for (key, value) in elements { members.append(Member(key, value)) }
        if Self.sort(&members) != nil { members = Self.keepingLast(elements) }
        self.members = members
    }

    /// Members added one by one, the later winning: only for literals that repeat a key.
    private static func keepingLast(_ elements: [(String, JSONValue)]) -> [Member] {
        var object = JSONObject()
        for (key, value) in elements { object[key] = value }
        return object.members
    }
}

// MARK: Equality and hashing, by key bytes and values, in the members' (canonical) order

extension JSONObject {
    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        guard a.members.count == b.members.count else { return false }
        for (x, y) in zip(a.members, b.members) {
            guard x.prefix == y.prefix, Identifier.equal(x.key, y.key), x.value == y.value else { return false }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(members.count)
        for member in members {
            Identifier.hash(member.key, into: &hasher)
            hasher.combine(member.value)
        }
    }
}
