public import PanesCore

/// A plain `connect` frame read straight into its request, with no `JSONValue` tree between.
///
/// Every window of a reconnect storm sends one `connect`. Through the tree, decoding it
/// (`JSONFastReader`, ~8,700 instructions), reading its fields (`MessageDecoder`,
/// `ConnectRequest.init(_:settings:)`, ~5,600) and freeing the tree (~1,900) came to about
/// 16,000 of a resume's ~112,000 on the service thread (bench/README.md, "A resume's `connect`
/// read from its text"). This reader takes a frame only when the general way would give the
/// same request, and answers nil for any other, which then goes that way (and gets its error
/// there, in its words). It takes:
/// - one object, in `JSONFastReader`'s grammar (its strings, integers and whitespace), whose
///   keys are those `connect` reads, each once: `id` (a string of at most 64 bytes or an
///   integer), `type` (`"connect"`), `protocol`, `client`, `workspace`, `ticket`, and the objects
///   `auth` (`name`, `token`), `traits` (`width`, `pointer`), `session` (`id`, `secret`) and
///   `state` (`visible`, `focused`), each value of the type that field takes;
/// - nothing else: no `idempotencyKey` (a keyed connect needs its fields' fingerprint), no
///   other key, no `null`, no repeated key (jansson refuses those; the tree's reader leaves
///   them to it), no nesting when `maxJSONDepth` is below 2;
/// - fields whose values `ConnectRequest.init(_:settings:)` would take (`ConnectRequest.init(plain:settings:)`).
///
/// `ConnectFrameReaderTests` compare it with the general way on mutations of real frames.
public enum ConnectFrameReader {
    /// `connect`'s position in `Hub.requestTypes`, as the decoder gives it.
    private static let typeIndex = Hub.requestTypes.firstIndex(of: ConnectRequest.type)!

    /// The request in `bytes`, or nil when this reader does not take the frame.
    public static func read(_ bytes: UnsafeRawBufferPointer, settings: Settings) -> ClientRequest? {
        guard settings.maxJSONDepth >= 2, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            return nil
        }
        var cursor = JSONFastReader.Cursor(base: base, end: bytes.count)
        var frame = Frame()
        guard cursor.members({ key, cursor in frame.read(key, &cursor) }) else { return nil }
        cursor.skipSpace()
        guard cursor.index == cursor.end, frame.isConnect, let id = frame.id,
              let request = ConnectRequest(plain: (consume frame).plain, settings: settings)
        else { return nil }
        return ClientRequest(id: id, request: request, typeIndex: typeIndex)
    }

    /// What the frame said so far.
    private struct Frame {
        var plain = ConnectRequest.Plain()
        var id: RequestID?
        var isConnect = false
        /// The top-level keys read, a bit each: a second one is left to the general way.
        var seen: UInt16 = 0

        /// Reads the value of the top-level `key` (the cursor on it); false to give up.
        mutating func read(_ key: UnsafeRawBufferPointer, _ cursor: inout JSONFastReader.Cursor) -> Bool {
            switch Key.top(key) {
            case nil:
                return false
            case let bit?:
                guard seen & bit.rawValue == 0 else { return false }
                seen |= bit.rawValue
                switch bit {
                case .id:
                    if cursor.byte == UInt8(ascii: "\"") {
                        guard let text = cursor.stringBytes(), text.count <= 64 else { return false }
                        id = .string(String(decoding: text, as: UTF8.self))
                    } else {
                        guard let int = cursor.plainInt() else { return false }
                        id = .int(int)
                    }
                case .type:
                    guard let text = cursor.stringBytes(), Key.named(text, "connect") else { return false }
                    isConnect = true
                case .protocolVersion:
                    plain.protocolVersion = cursor.plainInt()
                    return plain.protocolVersion != nil
                case .client:
                    plain.client = cursor.plainString()
                    return plain.client != nil
                case .workspace:
                    plain.workspace = cursor.plainString()
                    return plain.workspace != nil
                case .ticket:
                    plain.ticket = cursor.plainString()
                    return plain.ticket != nil
                case .auth:
                    plain.auth = true
                    return cursor.pair("name", "token") { isFirst, cursor in
                        if isFirst { plain.name = cursor.plainString() } else { plain.token = cursor.plainString() }
                        return (isFirst ? plain.name : plain.token) != nil
                    }
                case .traits:
                    return cursor.pair("width", "pointer") { isFirst, cursor in
                        if isFirst { plain.width = cursor.plainString() } else { plain.pointer = cursor.plainString() }
                        return (isFirst ? plain.width : plain.pointer) != nil
                    }
                case .session:
                    plain.session = true
                    return cursor.pair("id", "secret") { isFirst, cursor in
                        if isFirst {
                            plain.sessionID = cursor.stringBytes().map { SessionID(utf8: $0) }
                        } else {
                            plain.secret = cursor.plainString()
                        }
                        return isFirst ? plain.sessionID != nil : plain.secret != nil
                    }
                case .state:
                    plain.state = true
                    return cursor.pair("visible", "focused") { isFirst, cursor in
                        if isFirst { plain.visible = cursor.plainBool() } else { plain.focused = cursor.plainBool() }
                        return (isFirst ? plain.visible : plain.focused) != nil
                    }
                default:
                    return false
                }
                return true
            }
        }
    }

    /// The top-level keys a `connect` frame is read with here, a bit each.
    private struct Key: OptionSet {
        let rawValue: UInt16
        static let id = Key(rawValue: 1 << 0)
        static let type = Key(rawValue: 1 << 1)
        static let protocolVersion = Key(rawValue: 1 << 2)
        static let client = Key(rawValue: 1 << 3)
        static let workspace = Key(rawValue: 1 << 4)
        static let ticket = Key(rawValue: 1 << 5)
        static let auth = Key(rawValue: 1 << 6)
        static let traits = Key(rawValue: 1 << 7)
        static let session = Key(rawValue: 1 << 8)
        static let state = Key(rawValue: 1 << 9)

        /// The key `bytes` spell, by their length first; nil for any other.
        static func top(_ bytes: UnsafeRawBufferPointer) -> Key? {
            switch bytes.count {
            case 2: return named(bytes, "id") ? .id : nil
            case 4: return named(bytes, "type") ? .type : named(bytes, "auth") ? .auth : nil
            case 5: return named(bytes, "state") ? .state : nil
            case 6: return named(bytes, "client") ? .client : named(bytes, "traits") ? .traits
                : named(bytes, "ticket") ? .ticket : nil
            case 7: return named(bytes, "session") ? .session : nil
            case 8: return named(bytes, "protocol") ? .protocolVersion : nil
            case 9: return named(bytes, "workspace") ? .workspace : nil
            default: return nil
            }
        }

        static func named(_ bytes: UnsafeRawBufferPointer, _ name: StaticString) -> Bool { spells(bytes, name) }
    }
}

/// Whether `bytes` are `name`'s, byte for byte (keys are compared by their bytes, CONCEPTS.md).
private func spells(_ bytes: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
    guard bytes.count == name.utf8CodeUnitCount else { return false }
    for offset in 0..<bytes.count where bytes[offset] != name.utf8Start[offset] { return false }
    return true
}

extension JSONFastReader.Cursor {
    /// An object of at most the two keys named, each once, each value read by `body` (told
    /// whether it is the first key's, the cursor on the value; false to give up); any other
    /// key gives up.
    mutating func pair(_ first: StaticString, _ second: StaticString, _ body: (Bool, inout Self) -> Bool) -> Bool {
        var seenFirst = false, seenSecond = false
        return members { key, cursor in
            if !seenFirst, spells(key, first) {
                seenFirst = true
                return body(true, &cursor)
            }
            if !seenSecond, spells(key, second) {
                seenSecond = true
                return body(false, &cursor)
            }
            return false
        }
    }

    /// A string's bytes (the cursor on its opening quote), in the grammar's strings.
    mutating func stringBytes() -> UnsafeRawBufferPointer? {
        byte == UInt8(ascii: "\"") ? string() : nil
    }

    /// A string (the cursor on its opening quote), in the grammar's strings.
    mutating func plainString() -> String? {
        stringBytes().map { String(decoding: $0, as: UTF8.self) }
    }

    /// An integer in the grammar's integers.
    mutating func plainInt() -> Int64? {
        let first = byte
        guard first == UInt8(ascii: "-") || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")),
              case .int(let int)? = integer() else { return nil }
        return int
    }

    /// `true` or `false`.
    mutating func plainBool() -> Bool? {
        switch byte {
        case UInt8(ascii: "t"): literal("true") ? true : nil
        case UInt8(ascii: "f"): literal("false") ? false : nil
        default: nil
        }
    }
}
