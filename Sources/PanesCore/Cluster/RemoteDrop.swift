/// A drop this node took onto a window on another node, waiting for that node's answer.
struct RemoteDrop: Sendable {
    let drag: DragState.Drag
    let operation: DragOperation
    let receiver: RemoteReceiver
    let dropper: Dropper
    let context: RequestContext
    /// When it was offered (monotonic clock): this node's reservation of its key runs
    /// `nodeLeaseMs` from about then.
    let offeredAt: Millis
    /// Its commit taking the items back is in flight: an answer from the receiving node now
    /// changes nothing (the commit's outcome says who won), but is kept in `heard`.
    var returning = false
    /// How the receiving node said it settled the drop, heard while taking the items back.
    var heard: Settled?
    /// The store said the receiving node settled it (this node's take-back conflicted): its
    /// answer says how.
    var settledThere = false

    enum Settled: Sendable {
        /// The window there got the items.
        case delivered
        /// The window there was gone: the items went back to the dropper.
        case returned
        /// It said it settled nothing (its commit conflicted or failed).
        case neither
    }
}
