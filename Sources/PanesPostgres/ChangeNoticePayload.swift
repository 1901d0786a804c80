import Foundation
import PanesCore
internal import PanesJSON

/// The text of a `NOTIFY panes` payload: a JSON array of compact notices, one per channel a
/// transaction moved and one for the record cursor, e.g.
/// `[{"p":["acme","ada"],"v":7},{"d":"doc_1","v":42,"l":1204,"m":1763700000000},{"s":"s1","v":3},{"r":1207}]`
/// (`p`: a preference domain, user null for the workspace's; `d`: a document, with its length
/// `l` and last edit `m` when its log moved (`ChangeNotice.documentEdited`); `s`: a
/// session's lease; `r`: the record cursor; `n`: a `NodeSignal`; `g`: a signal too large for
/// a payload, stored in `node_signals` under that id).
///
/// PostgreSQL refuses payloads of 8000 bytes or more, so notices are split over several
/// payloads of at most `maxBytes`; a single notice too large for one (a preference domain
/// with an enormous name) is sent as `{"x":1}`, which the listener turns into
/// `.resubscribed`: look at everything. The notice is only a hint either way.
///
/// The first item of a payload a store sends starts with its origin, `"o"`, the sending
/// `PostgresStore`'s `noticeOrigin` (`[{"o":"3f2a…","r":1207},…]`). PostgreSQL delivers a
/// NOTIFY to every listener, the sender's own included; a listener that knows its node's
/// origin drops those payloads by comparing their first bytes (`hasOrigin`), before any of it
/// is decoded: a node knows what it wrote itself. A decoder ignores the key, so a node of an
/// earlier version reads these payloads as it did before.
enum ChangeNoticePayload {
    static let maxBytes = 7_900
    /// The bytes of a `noticeOrigin`: 64 random bits, hex.
    static let originLength = 16

    /// One entry of a payload: a notice, or a reference to a stored signal.
    enum Item: Equatable {
        case notice(ChangeNotice)
        case storedSignal(Int64)
    }

    /// The largest signal sent inline; a larger one is stored and referenced. The core's
    /// bound, since it splits what it can to fit (`NodeSignal.presenceRetold`).
    static let maxInlineSignalBytes = NodeSignal.maxInlineBytes

    /// Whether a signal encoded as `text` rides in a payload (at most `maxInlineSignalBytes`);
    /// a larger one is stored and referenced (`Item.storedSignal`, `PostgresStore.item(for:)`).
    static func fitsInline(_ text: String) -> Bool {
        text.utf8.count <= maxInlineSignalBytes
    }

    static func encode(_ notices: [ChangeNotice], origin: String? = nil) -> [String] {
        encode(items: notices.map(Item.notice), origin: origin)
    }

    /// A new origin for a store: 64 random bits, hex (`originLength` bytes).
    static func newOrigin() -> String {
        var generator = SystemRandomNumberGenerator()
        let text = String(generator.next() as UInt64, radix: 16)
        return String(repeating: "0", count: originLength - text.count) + text
    }

    /// What every payload sent with `origin` starts with.
    static func originPrefix(_ origin: String) -> String {
        "[" + originKey(origin)
    }

    /// `{"o":"…",`: the origin, opening a payload's first item.
    private static func originKey(_ origin: String) -> String {
        #"{"o":""# + origin + #"","#
    }

    /// Whether `payload`'s text, as libpq hands it over (NUL-terminated), starts with `prefix`
    /// (`originPrefix`): compared in place, nothing decoded or copied.
    static func hasOrigin(_ payload: UnsafePointer<CChar>, prefix: [CChar]) -> Bool {
        // strncmp stops at the payload's NUL: a shorter payload differs there.
        strncmp(payload, prefix, prefix.count) == 0
    }

    /// - Parameter origin: the sending store's `noticeOrigin`, put at the start of every
    ///   payload; nil sends none.
    static func encode(items: [Item], origin: String? = nil) -> [String] {
        // `{"o":"…",` in front of each payload's first item.
        let originKey = origin.map(originKey)
        let originBytes = originKey.map { $0.utf8.count - 1 } ?? 0
        var payloads: [String] = []
        var current: [String] = []
        var size = 2 + originBytes
        for entry in items {
            var item: String
            switch entry {
            case .notice(let notice): item = JSONCodec.encodeString(json(notice))
            case .storedSignal(let id): item = JSONCodec.encodeString(.object(["g": .int(id)]))
            }
            if item.utf8.count + 2 + originBytes > maxBytes { item = #"{"x":1}"# }
            if !current.isEmpty && size + item.utf8.count + 1 > maxBytes {
                payloads.append(payload(current, originKey))
                current = []
                size = 2 + originBytes
            }
            current.append(item)
            size += item.utf8.count + 1
        }
        if !current.isEmpty { payloads.append(payload(current, originKey)) }
        return payloads
    }

    /// `[item,…]`, the first item opened with `originKey` instead of its `{` (every item is an
    /// object with at least one key).
    private static func payload(_ items: [String], _ originKey: String?) -> String {
        let text = items.joined(separator: ",")
        guard let originKey else { return "[" + text + "]" }
        return "[" + originKey + text.dropFirst() + "]"
    }

    /// The notices in a payload; `.resubscribed` for anything unreadable, so a hint that
    /// cannot be understood still makes the node look.
    static func decode(_ payload: String) -> [ChangeNotice] {
        decodeItems(payload).map { item in
            switch item {
            case .notice(let notice): notice
            case .storedSignal: .resubscribed
            }
        }
    }

    static func decodeItems(_ payload: String) -> [Item] {
        guard case .success(let json) = JSONCodec.decode(payload), let items = json.arrayValue else {
            return [.notice(.resubscribed)]
        }
        return items.map { item in
            if let id = item["g"]?.intValue { return .storedSignal(id) }
            return .notice(notice(item))
        }
    }

    private static func notice(_ item: JSONValue) -> ChangeNotice {
        if let signal = item["n"].flatMap(NodeSignal.init(json:)) { return .signal(signal) }
        let version = item["v"]?.intValue
        if let cursor = item["r"]?.intValue { return .records(cursor: cursor) }
        if let domain = item["p"]?.arrayValue, domain.count == 2, let workspace = domain[0].stringValue,
           let version {
            return .channel(.preferences(PreferenceDomain(workspace: workspace, user: domain[1].stringValue)),
                            version: version)
        }
        if let id = item["d"]?.stringValue, let version {
            if let length = item["l"]?.intValue, let modifiedAt = item["m"]?.intValue {
                return .documentEdited(DocumentID(id), revision: version, length: Int(length), modifiedAt: modifiedAt)
            }
            return .channel(.document(DocumentID(id)), version: version)
        }
        if let id = item["s"]?.stringValue, let version { return .channel(.coordination(.session(SessionID(id))), version: version) }
        return .resubscribed
    }

    private static func json(_ notice: ChangeNotice) -> JSONValue {
        switch notice {
        case .channel(.preferences(let domain), let version):
            .object(["p": .array([.string(domain.workspace), domain.user.map(JSONValue.string) ?? .null]),
                     "v": .int(version)])
        case .channel(.document(let id), let version):
            .object(["d": .string(id.rawValue), "v": .int(version)])
        case .documentEdited(let id, let revision, let length, let modifiedAt):
            .object(["d": .string(id.rawValue), "v": .int(revision), "l": .int(Int64(length)), "m": .int(modifiedAt)])
        case .channel(.coordination(.session(let id)), let version):
            .object(["s": .string(id.rawValue), "v": .int(version)])
        case .records(let cursor):
            .object(["r": .int(cursor)])
        case .signal(let signal):
            .object(["n": signal.json])
        case .channel(.coordination(.drag), _), .channel(.coordination(.sessionRecord), _), .resubscribed, .nodesAlive,
             .nodesExpired, .nodesChecked, .leaseLost, .leaseRegained:
            // A node's own conclusions (and drag endings), never sent; were one sent, it would
            // only make nodes look.
            .object(["x": .int(1)])
        }
    }
}
