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

    /// Whether both hold the same bytes: a scene may take the other's in place of its own.
    /// Compared by bytes (`Identifier`), not as Swift strings, so a name that is only
    /// canonically equivalent to another is kept as its own bytes.
    func holdsTheSame(as other: SceneUser) -> Bool {
        self === other || (owner == other.owner && holdsTheSame(asOneOfItsOwner: other))
    }

    /// `holdsTheSame` for a user whose owner is known to be this one's by bytes (the scenes of
    /// one `OwnerScenes` entry, found by its owner): the name and client version alone, not the
    /// owner's two strings again.
    func holdsTheSame(asOneOfItsOwner other: SceneUser) -> Bool {
        assert(owner == other.owner, "the same owner's users only")
        return self === other
            || (Identifier.equal(name, other.name) && Identifier.equal(clientVersion, other.clientVersion))
    }
}
