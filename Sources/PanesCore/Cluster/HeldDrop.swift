/// A drop's `itemsDropped` for a window of a cluster, held in the shared store from the commit
/// that settles the drop for that window's session until the window's node has sent it
/// (`CoordinationCommand.holdDrop`, `.releaseDrop`): if that node dies between, the node that
/// takes the session over reads it (`LoadRequest.heldDrops`) and sends it (`Hub+HeldDrops.swift`).
public struct HeldDrop: Sendable, Equatable {
    public let session: SessionID
    /// The drag's identifier, which the event carries too: a window applies each drag once.
    public let drag: Identifier
    /// The `itemsDropped` event's fields.
    public let event: JSONObject
    /// Kept until then (`heldDropKeptMs` after its commit) unless sent before.
    public let keptUntil: Millis

    public init(session: SessionID, drag: Identifier, event: JSONObject, keptUntil: Millis) {
        self.session = session
        self.drag = drag
        self.event = event
        self.keptUntil = keptUntil
    }

    /// The row a session and a drag name (a drag is dropped once, onto one window).
    public struct Key: Hashable, Sendable {
        public let session: SessionID
        public let drag: Identifier

        public init(session: SessionID, drag: Identifier) {
            self.session = session
            self.drag = drag
        }
    }

    public var key: Key { Key(session: session, drag: drag) }
}
