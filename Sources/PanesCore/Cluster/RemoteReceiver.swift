/// The node, scene and session a drop onto a scene live on another node goes to
/// (`Hub.receiverElsewhere`).
struct RemoteReceiver: Sendable {
    let node: NodeID
    let scene: SceneID
    let session: SessionID
}
