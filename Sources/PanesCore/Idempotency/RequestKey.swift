/// A client's `idempotencyKey`: 1–128 bytes chosen by the client for one state-changing
/// request, so that a retry (after a lost reply, a reconnect to another node, an
/// `outcome_unknown`) is answered with the first attempt's outcome instead of applied again.
///
/// Compared and hashed by its bytes: Swift's `String` compares by canonical equivalence, and
/// two keys a client made different must never be taken for one.
public struct RequestKey: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    public static let maxBytes = 128

    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    public init(_ string: String) {
        bytes = Array(string.utf8)
    }

    /// The key as text (it came as a JSON string, so its bytes are UTF-8).
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Lowercase hex of the bytes: how stores that keep text spell it, and how locks name it.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The key from `hex`; nil for anything that is not an even run of hex digits.
    public init?(hex: String) {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in hex.utf8 {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        guard high == nil else { return nil }
        self.bytes = bytes
    }

    public var description: String { text }
}

/// Where a key is unique: the user and workspace that sent it, and the key. Users never see
/// each other's keys.
public struct RequestKeySlot: Hashable, Sendable, CustomStringConvertible {
    public let owner: OwnerKey
    public let key: RequestKey

    public init(owner: OwnerKey, key: RequestKey) {
        self.owner = owner
        self.key = key
    }

    /// Compared by bytes, like the key: owner names are identities (CONCEPTS, invariant 10).
    public static func == (a: Self, b: Self) -> Bool {
        a.key == b.key && a.owner.workspace.utf8.elementsEqual(b.owner.workspace.utf8)
            && a.owner.user.utf8.elementsEqual(b.owner.user.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        for byte in owner.workspace.utf8 { hasher.combine(byte) }
        hasher.combine(0xFF as UInt8)  // not a byte of UTF-8: where the workspace ends
        for byte in owner.user.utf8 { hasher.combine(byte) }
    }

    public var description: String { "\(owner)#\(key.hex)" }
}

/// A key and when it was recorded: names one record, not a later one of the same key.
public struct RecordedKey: Hashable, Sendable {
    public let slot: RequestKeySlot
    public let at: Millis

    public init(slot: RequestKeySlot, at: Millis) {
        self.slot = slot
        self.at = at
    }
}

/// The outcome of a keyed request, kept so a retry gets it back: written in the same store
/// transaction as the change it reports.
public struct RequestRecord: Sendable, Equatable {
    public let slot: RequestKeySlot
    /// What the request asked (`RequestFingerprint`): the same key with another request is refused.
    public let fingerprint: String
    /// The reply's `result` (for `connect`, the session it attached: see `ConnectRequest`).
    public let result: JSONValue
    /// When it was recorded; records are kept `idempotencyRetentionMs` from then.
    public let at: Millis

    public init(slot: RequestKeySlot, fingerprint: String, result: JSONValue, at: Millis) {
        self.slot = slot
        self.fingerprint = fingerprint
        self.result = result
        self.at = at
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.slot == b.slot && a.fingerprint == b.fingerprint && a.result == b.result && a.at == b.at
    }
}
