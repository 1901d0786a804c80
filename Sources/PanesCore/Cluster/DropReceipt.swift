/// A drop another node offered to a scene here, kept so that a repeated offer is answered the
/// same and delivers nothing again.
struct DropReceipt: Sendable {
    let scene: SceneID
    let origin: NodeID
    /// The `itemsDropped` event's fields, and the source's `dragEnded` fields.
    let event: JSONObject
    let ended: JSONObject
    /// The source's `dragEnded` fields when the window is gone here and the items go back to
    /// the dropper, settled here.
    var returnEnded: JSONObject?
    /// The window's session, whose `itemsDropped` the settling commit holds (`HeldDrop`) until
    /// it is sent; nil when the items go back to the dropper.
    var heldFor: SessionID?
    /// Nil while its commit is in flight.
    var delivered: Bool? = nil
    /// Settled here as given back to the dropper.
    var returned = false
}
