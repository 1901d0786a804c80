/// Identities are their bytes (CONCEPTS.md, invariant 10).
///
/// Swift's `String` `==` and hashing compare by canonical equivalence: NFC `josé` equals NFD
/// `jose` + U+0301, U+2126 OHM SIGN equals U+03A9, U+212A KELVIN SIGN equals `K`; and its `<`
/// orders normalised scalars. Two users whose `sub` differ in their bytes (RFC 7519 compares
/// `sub` without any transformation) would then share one dictionary entry: one session list,
/// one preference domain. The stores already compare bytes (SQLite's `BINARY`, PostgreSQL's
/// deterministic collations), so in memory every user, workspace, session, scene, document,
/// node and key identifier compares, hashes and sorts by its UTF-8 bytes too, through this.
///
/// A conforming type is equal, hashed and ordered by `rawValue`'s UTF-8 bytes (byte order is
/// code point order, and what PostgreSQL's `COLLATE "C"` and SQLite's `BINARY` sort by).
public protocol ByteIdentifier: Hashable, Comparable, Sendable {
    var rawValue: String { get }
}

extension ByteIdentifier {
    @inlinable public static func == (a: Self, b: Self) -> Bool { Identifier.equal(a.rawValue, b.rawValue) }
    @inlinable public static func < (a: Self, b: Self) -> Bool { Identifier.less(a.rawValue, b.rawValue) }
    @inlinable public func hash(into hasher: inout Hasher) { Identifier.hash(rawValue, into: &hasher) }
}

/// A name from outside used as a key, where no more specific identifier type exists: a
/// workspace in a token's grants, a tokens-file token, a JWT `kid`, a ticket or drag id.
public struct Identifier: ByteIdentifier, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String
    @inlinable public init(_ rawValue: String) { self.rawValue = rawValue }
    @inlinable public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    /// Whether two strings are the same identifier: the same UTF-8 bytes.
    @inlinable public static func equal(_ a: String, _ b: String) -> Bool {
        // The same two words are the same string: one storage object, or the same short string
        // held inline (up to 15 bytes, its bytes and count in the words). Short identifiers, as
        // user, workspace and version names often are, then compare without a copy of each to
        // the stack (~80 of ~100 instructions a comparison); other strings take the byte
        // comparison, which decides.
        // (Two words on 64-bit platforms only; elsewhere the byte comparison alone decides.)
        if MemoryLayout<String>.size == MemoryLayout<(UInt64, UInt64)>.size,
           unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self) { return true }
        let x = a.utf8, y = b.utf8
        guard x.count == y.count else { return false }
        let fast = x.withContiguousStorageIfAvailable { p in
            y.withContiguousStorageIfAvailable { q in sameBytes(UnsafeRawBufferPointer(p), UnsafeRawBufferPointer(q)) }
        }
        if let fast, let fast { return fast }
        return x.elementsEqual(y)
    }

    /// Whether `a` sorts before `b` by bytes.
    @inlinable public static func less(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// Feeds the UTF-8 bytes and a terminator (0xFF never occurs in UTF-8), so that keys made of
    /// several identifiers (`OwnerKey`) hash `("ab", "c")` and `("a", "bc")` apart.
    @inlinable public static func hash(_ string: String, into hasher: inout Hasher) {
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if done == nil {
            for byte in string.utf8 { hasher.combine(byte) }
        }
        hasher.combine(0xFF as UInt8)
    }

    /// Equal byte ranges of equal length, eight bytes at a time: identifiers are short, and
    /// `elementsEqual` on buffers went byte by byte (4× the instructions, measured).
    @inlinable static func sameBytes(_ p: UnsafeRawBufferPointer, _ q: UnsafeRawBufferPointer) -> Bool {
        let count = p.count
        var offset = 0
        while offset + 8 <= count {
            if p.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                != q.loadUnaligned(fromByteOffset: offset, as: UInt64.self) { return false }
            offset += 8
        }
        while offset < count {
            if p[offset] != q[offset] { return false }
            offset += 1
        }
        return true
    }
}

/// Tables keyed by `Identifier` read with a plain `String`, looked up by its bytes, so code that
/// holds a name from the wire writes `tickets[id]` and still gets bytewise identity.
extension Dictionary where Key == Identifier {
    @inlinable public subscript(_ key: String) -> Value? {
        get { self[Identifier(key)] }
        set { self[Identifier(key)] = newValue }
    }

    @inlinable public subscript(_ key: String, default value: @autoclosure () -> Value) -> Value {
        get { self[Identifier(key), default: value()] }
        set { self[Identifier(key), default: value()] = newValue }
    }

    @inlinable @discardableResult
    public mutating func removeValue(forKey key: String) -> Value? { removeValue(forKey: Identifier(key)) }
}
