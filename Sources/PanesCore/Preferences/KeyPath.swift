/// A validated preference key path: `editor.showWordCount`. Names a key or, for an
/// observation, the subtree of keys below it.
public struct KeyPath: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let string: String

    public static let maxSegments = 16
    public static let maxBytes = 256

    public init(_ string: String, field: String = "keyPath") throws(PanesError) {
        guard string.utf8.count <= Self.maxBytes, Self.isWellFormed(string.utf8) else {
            throw PanesError(.invalidKeyPath,
                             "`\(string.prefix(80))` is not a key path: up to \(Self.maxSegments) dot-separated segments of letters, digits, `_` or `-`, at most \(Self.maxBytes) bytes",
                             field: field)
        }
        self.string = string
    }

    /// Whether `other` is this key path or lies below it.
    public func contains(_ other: KeyPath) -> Bool {
        other.string == string || other.string.hasPrefix(string + ".")
    }

    /// Whether one of the two lies strictly inside the other: such keys cannot both hold values.
    public func nests(with other: KeyPath) -> Bool {
        other != self && (contains(other) || other.contains(self))
    }

    public var description: String { string }
    public static func < (a: KeyPath, b: KeyPath) -> Bool { a.string < b.string }

    /// 1 to `maxSegments` segments, each one or more segment bytes, between single dots. Read
    /// by bytes, in one pass (every write names a key path): every allowed byte is ASCII, so a
    /// dot is a dot whatever follows it, and any other byte makes the path wrong.
    private static func isWellFormed(_ utf8: String.UTF8View) -> Bool {
        var segments = 1
        var segmentIsEmpty = true
        for byte in utf8 {
            if byte == UInt8(ascii: ".") {
                guard !segmentIsEmpty, segments < Self.maxSegments else { return false }
                segments += 1
                segmentIsEmpty = true
            } else {
                guard isSegmentByte(byte) else { return false }
                segmentIsEmpty = false
            }
        }
        return !segmentIsEmpty
    }

    private static func isSegmentByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }
}
