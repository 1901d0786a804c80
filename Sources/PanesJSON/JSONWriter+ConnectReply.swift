import PanesCore
import Synchronization

/// A `connect` reply written from its parts (`ConnectReply`), with no `JSONValue` tree: the
/// bytes `write(message.json)` writes for it, keys in jansson's order (sorted by their UTF-8
/// bytes), which here is the order of the lines below. `JSONWriterConnectReplyTests` checks
/// the two agree for every optional part present and absent.
extension JSONWriter {
    /// A message: a `connect` reply from its parts, any other through its tree.
    mutating func write(_ message: ServerMessage) {
        guard case .connected(let id, let reply) = message else { return write(message.json) }
        write(connected: id, reply)
    }

    /// `{"ok":true,"re":…,"result":{…},"type":"reply"}`.
    mutating func write(connected id: RequestID, _ reply: ConnectReply) {
        put(#"{"ok":true,"re":"#)
        write(id.json)
        put(#","result":{"auth":{"expiresAt":"#)
        if let expiresAt = reply.identity.expiresAt { write(expiresAt) } else { put("null") }
        put(#"},"connectionOptions":{"userActivities":["#)
        for (index, activity) in reply.handedOver.enumerated() {
            if index > 0 { put(UInt8(ascii: ",")) }
            write(activity.json)
        }
        put(#"]},"created":"#)
        put(reply.created ? "true" : "false")
        if let forkedFrom = reply.forkedFrom {
            put(#","forkedFrom":"#)
            write(forkedFrom.bytes)
        }
        let constants = ConstantParts.of(reply.constants)
        put(constants.limits)
        put(#","restoration":{"status":"#)
        put(quoted: reply.restoration)
        put(#"},"scene":"#)
        write(reply.scene.bytes)
        put(constants.server)
        write(session: reply.session, secret: reply.secret, handBack: reply.handsBack)
        put(#","traits":{"pointer":"#)
        put(quoted: reply.traits.pointer)
        put(#","width":"#)
        put(quoted: reply.traits.width)
        put(#"},"user":{"id":"#)
        write(reply.identity.user)
        put(#","name":"#)
        write(reply.identity.name)
        put(#","role":"#)
        put(quoted: reply.identity.role)
        put(#"},"workspace":"#)
        write(reply.session.owner.workspace)
        put(#"},"type":"reply"}"#)
    }

    /// `,"limits":{…}`.
    fileprivate mutating func write(limits constants: ConnectReply.Constants) {
        put(#","limits":{"maxActivityBytes":"#)
        write(Int64(constants.maxActivityBytes))
        put(#","maxMessageBytes":"#)
        write(Int64(constants.maxMessageBytes))
        put(#","maxUserInfoBytes":"#)
        write(Int64(constants.maxUserInfoBytes))
        put(#","rateLimitPerSecond":"#)
        write(Int64(constants.rateLimitPerSecond))
        put(UInt8(ascii: "}"))
    }

    /// `SceneSession.json(secret:handBack:)`, with the secret always present.
    private mutating func write(session: SceneSession, secret: String, handBack: Bool) {
        put(#"{"configuration":"#)
        write(session.configuration)
        put(#","createdAt":"#)
        write(session.createdAt)
        put(#","lastActiveAt":"#)
        write(session.lastActiveAt)
        put(#","persistentIdentifier":"#)
        write(session.id.bytes)
        let restoration = handBack ? session.restoration : nil
        if let restoration {
            put(#","restorationMetadata":"#)
            write(restoration.metadata.json)
        }
        put(#","role":"#)
        put(quoted: session.role)
        put(#","secret":"#)
        write(secret)
        if let snapshot = session.snapshot {
            put(#","snapshot":"#)
            write(snapshot)
        }
        put(#","stateRestorationActivity":"#)
        if let restoration { write(restoration.activity.json) } else { put("null") }
        put(#","subtitle":"#)
        write(session.subtitle)
        put(#","title":"#)
        write(session.title)
        put(#","userInfo":"#)
        // Most sessions have none: `{}` without making and reading an empty object.
        if session.hasUserInfo { write(JSONValue.object(session.userInfo)) } else { put("{}") }
        put(UInt8(ascii: "}"))
    }

    /// `,"server":{…},"session":` (the key of the part after it, which the bytes made once end with).
    fileprivate mutating func write(server constants: ConnectReply.Constants) {
        put(#","server":{"protocol":"#)
        write(Int64(constants.protocolVersion))
        put(#","version":"#)
        write(constants.serverVersion)
        put(#"},"session":"#)
    }

    /// A status, trait or role as its quoted raw value, from constant text: each of these was a
    /// `String` made from the case and then checked for escapes (~140 instructions, five a
    /// reply). `JSONWriterConnectReplyTests` checks every case against its raw value.
    mutating func put(quoted status: RestorationStatus) {
        switch status {
        case .none: put(#""none""#)
        case .restored: put(#""restored""#)
        case .stale: put(#""stale""#)
        case .incompatible: put(#""incompatible""#)
        case .superseded: put(#""superseded""#)
        case .cleanStart: put(#""cleanStart""#)
        case .documentGone: put(#""document_gone""#)
        }
    }

    mutating func put(quoted pointer: Traits.Pointer) {
        switch pointer {
        case .fine: put(#""fine""#)
        case .coarse: put(#""coarse""#)
        }
    }

    mutating func put(quoted width: Traits.Width) {
        switch width {
        case .compact: put(#""compact""#)
        case .regular: put(#""regular""#)
        }
    }

    mutating func put(quoted role: SceneConfiguration.SessionRole) {
        switch role {
        case .window: put(#""window""#)
        case .presenter: put(#""presenter""#)
        }
    }

    mutating func put(quoted role: Role) {
        switch role {
        case .viewer: put(#""viewer""#)
        case .editor: put(#""editor""#)
        case .owner: put(#""owner""#)
        }
    }
}

/// The parts of a `connect` reply that are the same in every reply of a server (`limits`, and
/// `server` with the key after it), written once and copied in (~850 instructions a reply as
/// eight puts and five integers, issue 27).
///
/// Kept for the first constants encoded in the process (a server has one hub, made once); a
/// reply with other constants (tests with other settings) has them written each time. Compared
/// by their bytes, so a server version that only canonically equals the kept one is not taken
/// for it.
final class ConstantParts: Sendable {
    let constants: ConnectReply.Constants
    /// `,"limits":{…}`.
    let limits: [UInt8]
    /// `,"server":{…},"session":`.
    let server: [UInt8]

    private init(_ constants: ConnectReply.Constants) {
        self.constants = constants
        limits = Self.written { $0.write(limits: constants) }
        server = Self.written { $0.write(server: constants) }
    }

    private static func written(_ body: (inout JSONWriter) -> Void) -> [UInt8] {
        var writer = JSONWriter(headroom: 0)
        body(&writer)
        return writer.finish()
    }

    /// Set once, by the first reply encoded, and never released: the kept parts' address
    /// (retained), 0 until then. An `Atomic<UInt>` and not an `AtomicLazyReference`, whose
    /// `load()` is not inlined and looks up `Unmanaged`'s metadata for its instance type on
    /// every call (~650 instructions a reply, issue 27); this load is one instruction.
    private static let kept = Atomic<UInt>(0)

    /// The parts for `constants`: the kept ones when they are these, else written now.
    static func of(_ constants: ConnectReply.Constants) -> ConstantParts {
        let address = kept.load(ordering: .acquiring)
        if address != 0 {
            let parts = Unmanaged<ConstantParts>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeUnretainedValue()
            if parts.holds(constants) { return parts }
        }
        let made = ConstantParts(constants)
        if address == 0 {
            // Retained for the kept reference; released again when another thread kept its own first.
            let retained = Unmanaged.passRetained(made)
            let bits = UInt(bitPattern: retained.toOpaque())
            if !kept.compareExchange(expected: 0, desired: bits, ordering: .acquiringAndReleasing).exchanged {
                retained.release()
            }
        }
        return made
    }

    private func holds(_ other: ConnectReply.Constants) -> Bool {
        constants.protocolVersion == other.protocolVersion && constants.maxMessageBytes == other.maxMessageBytes
            && constants.maxUserInfoBytes == other.maxUserInfoBytes && constants.maxActivityBytes == other.maxActivityBytes
            && constants.rateLimitPerSecond == other.rateLimitPerSecond
            && Identifier.equal(constants.serverVersion, other.serverVersion)
    }
}
