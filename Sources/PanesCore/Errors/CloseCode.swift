/// WebSocket close codes the server uses, with what a client should do after each.
public enum CloseCode: UInt16, Sendable, CaseIterable {
    /// The client or server ended the scene on purpose.
    case normal = 1000
    /// The server is draining (SIGTERM): reconnect after the announced delay.
    case goingAway = 1001
    /// A frame that breaks RFC 6455 (reserved bits or opcodes, bad fragmentation, an invalid
    /// close code). Sent by the transport.
    case protocolError = 1002
    /// A binary frame or other frame the protocol does not use.
    case unsupportedData = 1003
    /// A text frame (or a close reason) that is not valid UTF-8.
    case invalidPayload = 1007
    /// A message over `maxMessageBytes`: the connection cannot continue mid-frame.
    case messageTooBig = 1009
    /// An unexpected server fault.
    case internalError = 1011
    /// No `connect` arrived within `connectTimeout`: reconnect and send `connect` first.
    case connectTimeout = 4000
    /// The session was destroyed: do not resume it; close the window (after the animation).
    case sessionDestroyed = 4001
    /// Another connection resumed this session after this one stopped answering pings.
    case replaced = 4002
    /// The client read too slowly and its outbound queue overflowed: reconnect and catch up.
    case slowConsumer = 4008
    /// The client answered no ping for twice `idlePingMs`: it is gone, or its network is.
    case unresponsive = 4009
    /// The scene's token expired and no `refreshToken` replaced it: get a new token, reconnect.
    case tokenExpired = 4010
    /// This node lost its lease (it cannot reach the shared database): reconnect at once;
    /// another node resumes the session.
    case nodeLost = 4011
    /// Too many failed authentications came from this peer address (`authFailureBurst`): the
    /// `connect` was refused unchecked with `rate_limited`; reconnect after its `retryAfterMs`.
    case authenticationLimited = 4012

    public var meaning: String {
        switch self {
        case .normal: "The scene ended on purpose."
        case .goingAway: "The server is shutting down (after `goingAway`)."
        case .protocolError: "A frame that breaks RFC 6455 (reserved bits or opcodes, bad fragmentation, an invalid close code)."
        case .unsupportedData: "A binary frame; the protocol only uses text frames."
        case .invalidPayload: "A text frame or close reason that is not valid UTF-8."
        case .messageTooBig: "A message over `maxMessageBytes`."
        case .internalError: "An unexpected server fault."
        case .connectTimeout: "No `connect` within `connectTimeoutMs`."
        case .sessionDestroyed: "The session was destroyed (after `sessionDestroyed`)."
        case .replaced: "This connection stopped answering pings and another resumed its session."
        case .slowConsumer: "The outbound queue overflowed (`maxOutboundQueue`): the client read too slowly."
        case .unresponsive: "No answer to pings for twice `idlePingMs`."
        case .tokenExpired: "The scene's token expired before a `refreshToken` replaced it."
        case .nodeLost: "This node lost its lease on the shared database: reconnect; another node resumes the session."
        case .authenticationLimited: "Too many failed authentications from this address (`authFailureBurst`, `authFailuresPerMinute`): the `connect` was refused without checking its token."
        }
    }
}
