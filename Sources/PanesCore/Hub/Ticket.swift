/// A single-use, short-lived permit for a new window to connect to a given session, with
/// activities handed to it as connection options.
struct Ticket: Sendable {
    let id: String
    let owner: OwnerKey
    let session: SessionID
    let handedOver: [Activity]
    let expiresAt: Millis
    /// The session was made for this ticket; if the ticket expires unused, the session goes too,
    /// so an abandoned "open in new window" leaves nothing behind.
    let madeSession: Bool
}
