/// What a scene has from its user and its client: the owner, the display name and the client's
/// version. A user's windows from one client nearly always have the same three, so the scenes
/// of one owner share one of these (`Scenes.attach` hands a new scene the one its owner's
/// scenes hold when all three are equal by bytes), and a scene keeps a reference (8 bytes)
/// instead of the four strings (64). Immutable: a scene whose name changes gets a new one.
final class SceneUser: Sendable {
    let owner: OwnerKey
    let name: String
    let clientVersion: String

    init(owner: OwnerKey, name: String, clientVersion: String) {
        self.owner = owner
        self.name = name
        self.clientVersion = clientVersion
    }

    /// Whether it holds this name and client version: compared by bytes (`Identifier`), not
    /// as Swift strings, so a name that is only canonically equivalent to another is kept as its
    /// own bytes. The owner is not compared: the caller holds it for its owner's scenes only (an
    /// `OwnerScenes` entry, found by its owner's bytes).
    func holds(name: String, clientVersion: String) -> Bool {
        Identifier.equal(self.name, name) && Identifier.equal(self.clientVersion, clientVersion)
    }
}
