/// A transport connection, numbered by the transport. Crosses threads as a plain number:
/// identifiers, not objects, travel between the service thread and the store thread.
public struct ConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "c\(rawValue)" }
}

/// A scene session's `persistentIdentifier`: 128 random bits, hex. Not a credential.
/// Compared by its bytes (`ByteIdentifier`), as every identifier a client can send; held
/// inline when it has the minted form (`InlineIdentifier`: every idle session keeps one).
public struct SessionID: ByteIdentifier, CustomStringConvertible {
    public let bytes: InlineIdentifier
    public init(_ rawValue: String) { bytes = InlineIdentifier(rawValue) }
    /// The id these UTF-8 bytes spell, with no `String` made of a packed one.
    public init(utf8: UnsafeRawBufferPointer) { bytes = InlineIdentifier(utf8: utf8) }
    public var rawValue: String { bytes.string }
    public var description: String { rawValue }
    @inlinable public static func == (a: Self, b: Self) -> Bool { a.bytes == b.bytes }
    public static func < (a: Self, b: Self) -> Bool { a.bytes < b.bytes }
    @inlinable public func hash(into hasher: inout Hasher) { bytes.hash(into: &hasher) }
}

/// A live scene: one connection attached to one session. Held inline when it has the minted
/// form (`scn_` and 24 hex digits, `InlineIdentifier`).
public struct SceneID: ByteIdentifier, CustomStringConvertible {
    public let bytes: InlineIdentifier
    public init(_ rawValue: String) { bytes = InlineIdentifier(rawValue) }
    public init(bytes: InlineIdentifier) { self.bytes = bytes }
    public var rawValue: String { bytes.string }
    public var description: String { rawValue }
    @inlinable public static func == (a: Self, b: Self) -> Bool { a.bytes == b.bytes }
    public static func < (a: Self, b: Self) -> Bool { a.bytes < b.bytes }
    @inlinable public func hash(into hasher: inout Hasher) { bytes.hash(into: &hasher) }
}

/// Who owns a session: a user inside a workspace. Every per-user thing is keyed by this.
/// Equal, hashed and ordered by the bytes of both (`Identifier`): users whose ids are
/// canonically equivalent but differ in bytes are different users.
public struct OwnerKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let workspace: String
    public let user: String
    public init(workspace: String, user: String) {
        self.workspace = workspace
        self.user = user
    }
    public var description: String { "\(user)@\(workspace)" }

    public static func == (a: Self, b: Self) -> Bool {
        Identifier.equal(a.user, b.user) && Identifier.equal(a.workspace, b.workspace)
    }

    public func hash(into hasher: inout Hasher) {
        Identifier.hash(workspace, into: &hasher)
        Identifier.hash(user, into: &hasher)
    }

    /// By workspace, then user, bytewise.
    public static func < (a: Self, b: Self) -> Bool {
        Identifier.equal(a.workspace, b.workspace) ? Identifier.less(a.user, b.user) : Identifier.less(a.workspace, b.workspace)
    }
}

/// Milliseconds since the Unix epoch: what the wire carries and what JavaScript's `Date` takes.
public typealias Millis = Int64
