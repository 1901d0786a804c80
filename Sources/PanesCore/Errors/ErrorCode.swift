/// Every error the protocol can report, with its stable name and number.
///
/// Numbers fall in ranges that tell a client what to do without knowing the code:
///
/// | range | meaning | what the client does |
/// |---|---|---|
/// | 1000–1999 | the request is wrong | fix it; sending it again unchanged fails again |
/// | 2000–2999 | the state changed or is not there | refresh its view (re-read, re-open), then decide |
/// | 3000–3999 | not permitted | give up; only another identity or role (or a new token) helps |
/// | 4000–4999 | the server cannot do it now | retry later with backoff (`retryAfterMs` when given) |
///
/// The table is the single source for PROTOCOL.md's error list; tests check they agree.
public enum ErrorCode: String, Sendable, CaseIterable {
    // 1xxx: the request is wrong.
    case malformedJSON = "malformed_json"
    case invalidMessage = "invalid_message"
    case unknownType = "unknown_type"
    case missingField = "missing_field"
    case invalidField = "invalid_field"
    case tooLarge = "too_large"
    case notConnected = "not_connected"
    case alreadyConnected = "already_connected"
    case unsupportedProtocol = "unsupported_protocol"
    case tooMany = "too_many"
    case typeMismatch = "type_mismatch"
    case keyPathConflict = "key_path_conflict"
    case operationNotAllowed = "operation_not_allowed"
    case invalidOperation = "invalid_operation"
    case unsupportedActivity = "unsupported_activity"
    case invalidKeyPath = "invalid_key_path"
    case unknownDomain = "unknown_domain"
    case nestingTooDeep = "nesting_too_deep"
    case numberOutOfRange = "number_out_of_range"
    case idempotencyKeyReused = "idempotency_key_reused"

    // 2xxx: the state changed or is not there.
    case sessionNotFound = "session_not_found"
    case versionConflict = "version_conflict"
    case ticketInvalid = "ticket_invalid"
    case dragNotFound = "drag_not_found"
    case dragAlreadyDropped = "drag_already_dropped"
    case sceneNotFound = "scene_not_found"
    case documentNotFound = "document_not_found"
    case documentNotOpen = "document_not_open"
    case revisionUnavailable = "revision_unavailable"
    case revisionInFuture = "revision_in_future"
    case observationNotFound = "observation_not_found"
    case versionNotFound = "version_not_found"

    // 3xxx: not permitted.
    case unauthenticated = "unauthenticated"
    case notAMember = "not_a_member"
    case forbidden = "forbidden"
    case preferenceLocked = "preference_locked"
    case tokenExpired = "token_expired"

    // 4xxx: try again later.
    case rateLimited = "rate_limited"
    case serverDraining = "server_draining"
    case storageFailed = "storage_failed"
    case internalError = "internal_error"
    case outcomeUnknown = "outcome_unknown"

    /// The stable protocol number.
    public var number: Int {
        switch self {
        case .malformedJSON: 1000
        case .invalidMessage: 1001
        case .unknownType: 1002
        case .missingField: 1003
        case .invalidField: 1004
        case .tooLarge: 1005
        case .notConnected: 1006
        case .alreadyConnected: 1007
        case .unsupportedProtocol: 1008
        case .tooMany: 1009
        case .typeMismatch: 1010
        case .keyPathConflict: 1011
        case .operationNotAllowed: 1012
        case .invalidOperation: 1013
        case .unsupportedActivity: 1014
        case .invalidKeyPath: 1015
        case .unknownDomain: 1016
        case .nestingTooDeep: 1017
        case .numberOutOfRange: 1018
        case .idempotencyKeyReused: 1019
        case .sessionNotFound: 2000
        case .versionConflict: 2001
        case .ticketInvalid: 2002
        case .dragNotFound: 2003
        case .dragAlreadyDropped: 2004
        case .sceneNotFound: 2005
        case .documentNotFound: 2006
        case .documentNotOpen: 2007
        case .revisionUnavailable: 2008
        case .revisionInFuture: 2009
        case .observationNotFound: 2010
        case .versionNotFound: 2011
        case .unauthenticated: 3000
        case .notAMember: 3001
        case .forbidden: 3002
        case .preferenceLocked: 3003
        case .tokenExpired: 3004
        case .rateLimited: 4000
        case .serverDraining: 4001
        case .storageFailed: 4002
        case .internalError: 4003
        case .outcomeUnknown: 4004
        }
    }

    /// What a client should do, derived from the number's range.
    public var action: ErrorAction {
        switch number {
        case 1000..<2000: .fix
        case 2000..<3000: .refresh
        case 3000..<4000: .giveUp
        default: .retry
        }
    }

    /// One line for PROTOCOL.md and for `--help`-style listings.
    public var meaning: String {
        switch self {
        case .malformedJSON: "The frame is not valid JSON."
        case .invalidMessage: "The frame is JSON but not an object with a string `type` and an `id`."
        case .unknownType: "No request has this `type`."
        case .missingField: "A required field is absent; `field` names it."
        case .invalidField: "A field has the wrong JSON type or an out-of-range value; `field` names it."
        case .tooLarge: "A value is over its size limit; the message names the limit setting."
        case .notConnected: "Only `connect` is accepted before the scene is connected."
        case .alreadyConnected: "This connection is already a scene; open a new connection for another."
        case .unsupportedProtocol: "The `protocol` version is not one this server speaks."
        case .tooMany: "A count limit was reached (sessions, observations, drag items); the message names it."
        case .typeMismatch: "The value's type differs from the registered default's type for that key."
        case .keyPathConflict: "The key path lies inside, or above, a key that already holds a value."
        case .operationNotAllowed: "The drag item does not allow this operation (`copy` or `move`)."
        case .invalidOperation: "The document operation is malformed or does not span the document."
        case .unsupportedActivity: "No scene configuration accepts this activity type."
        case .invalidKeyPath: "The key path is not dot-separated segments of letters, digits, `_` or `-`."
        case .unknownDomain: "The preference domain is not `user` or `workspace`."
        case .nestingTooDeep: "Arrays and objects are nested deeper than `maxJSONDepth`."
        case .numberOutOfRange: "A number cannot be held exactly: an integer outside 64 bits, or a real beyond a double."
        case .idempotencyKeyReused: "The `idempotencyKey` was used for a different request; use a new key for a new request."
        case .sessionNotFound: "No session you may use has this identifier and secret; start a new one."
        case .versionConflict: "Compare-and-set failed: the value changed since the version you read."
        case .ticketInvalid: "The window ticket is unknown, used, expired, or not yours."
        case .dragNotFound: "The drag is unknown or expired."
        case .dragAlreadyDropped: "The drag was already dropped (or cancelled)."
        case .sceneNotFound: "The named scene is not connected (or not yours)."
        case .documentNotFound: "No document with this identifier in the workspace (it may have been deleted)."
        case .documentNotOpen: "Open the document before editing it or sharing presence in it."
        case .revisionUnavailable: "The revision is older than the kept log; re-open the document."
        case .revisionInFuture: "The revision is newer than the document's; re-open the document."
        case .observationNotFound: "This scene has no observation with that identifier."
        case .versionNotFound: "The document has no version with that identifier (never, or no longer: a checkpoint past `maxCheckpointsPerDocument`, or the document was deleted); `field` names the request's field."
        case .unauthenticated: "The token is not valid."
        case .notAMember: "The user is not a member of that workspace."
        case .forbidden: "The user's role in the workspace does not allow this."
        case .preferenceLocked: "The key is locked by the server's managed preferences; no one may change it."
        case .tokenExpired: "The token has expired; get a new one from the application and send it again."
        case .rateLimited: "Too many requests; wait `retryAfterMs` and send again."
        case .serverDraining: "The server is shutting down; reconnect after `reconnectAfterMs`."
        case .storageFailed: "The store could not make the change durable; nothing was applied. Retry."
        case .internalError: "An unexpected server fault; retry later."
        case .outcomeUnknown: "The store lost its connection around the commit and could not yet find out whether the change was applied. Resend the same request with the same `idempotencyKey`: it is applied at most once, and answered with what happened."
        }
    }
}

/// The three things a client can do about an error.
public enum ErrorAction: String, Sendable {
    case fix, refresh, giveUp, retry
}
