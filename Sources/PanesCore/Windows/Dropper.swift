/// The window that dropped a drag, as a delivery needs it: its scene and session (named in the
/// source's `dragEnded` for a drop onto itself), its user (who may receive the items) and its
/// client version (for new windows). A value, not the `Scene`: in a cluster a drop is delivered
/// once the store has ordered it, and the dropping window may have closed by then.
struct Dropper: Sendable {
    let scene: SceneID
    let session: SessionID
    let owner: OwnerKey
    let clientVersion: String

    init(_ scene: Scene) {
        self.scene = scene.id
        session = scene.session
        owner = scene.owner
        clientVersion = scene.clientVersion
    }

    /// Whether a drop onto a scene naming `named` is a drop onto this window itself (none named,
    /// or this one): the one rule the delivery, the remote receiver and a cluster's record in
    /// the commit (`endInStore`) all follow.
    func isItself(_ named: SceneID?) -> Bool {
        named.map { $0 == scene } ?? true
    }
}
