/// A scene session (UISceneSession): the persistent record behind a window, which outlives
/// its connections. Everything per-window is keyed by its `id`, never stored once per app.
public struct SceneSession: Sendable, Equatable {
    /// `persistentIdentifier`.
    public let id: SessionID
    // The two small fields in the 6 bytes after `id`'s 18 (Swift lays a struct out in
    // declaration order): 160 → 152 bytes a session.
    public var role: SceneConfiguration.SessionRole
    /// `failedRestores`, which counts up to `cleanStartThreshold` (a stored count past 2³¹
    /// reads as 2³¹ - 1, which is as far past any threshold).
    private var failedRestoresCount: Int32
    /// The hash (`SecretHasher`) of the secret that, with the identifier, resumes the session;
    /// the identifier alone is not a credential. The secret itself is never stored, on disk or
    /// in memory: it is handed to the client once, in the `connect` reply.
    public var secretHash: SecretHash
    public let owner: OwnerKey
    public var configuration: String
    /// The switcher title. Empty for none.
    public var title: String {
        get { detailsBox?.details.title ?? "" }
        _modify { yield &details.title }
    }
    /// A second line for the switcher (UIScene's `subtitle`): the window's own words, such as
    /// the first line of its note. Empty for none.
    public var subtitle: String {
        get { detailsBox?.details.subtitle ?? "" }
        _modify { yield &details.subtitle }
    }
    /// A short summary for the switcher: `{"text": …}` or `{"image": "data:…"}`.
    public var snapshot: JSONValue? {
        get { detailsBox?.details.snapshot }
        _modify { yield &details.snapshot }
    }
    /// Per-window customisations (sidebar shown, last colour). Never global.
    public var userInfo: JSONObject {
        // `JSONObject()`, not `[:]`: the literal went through the object's builder (~290
        // instructions), for every session with no details, on every connect reply.
        get { detailsBox?.details.userInfo ?? JSONObject() }
        _modify { yield &details.userInfo }
    }
    /// Whether `userInfo` has any member, without making an empty one to ask.
    public var hasUserInfo: Bool { !(detailsBox?.details.userInfo.isEmpty ?? true) }
    public var restoration: Restoration? {
        get { detailsBox?.details.restoration }
        _modify { yield &details.restoration }
    }
    /// What the window's client wrote (title, subtitle, snapshot, userInfo, restoration), kept
    /// out of line and only when any is set: inline they were 80 of 216 bytes, and every session
    /// the server knows sits in its sessions table, most of them idle, many with none (a new
    /// window's are all empty). Nil when all are empty.
    /// Replacing it is safe anywhere; its contents change only in SessionDetails.swift.
    var detailsBox: SessionDetailsBox?
    public let createdAt: Millis
    public var lastActiveAt: Millis
    /// Abnormal disconnects soon after a restore, in a row; at `cleanStartThreshold` the
    /// restoration activity is dropped.
    public var failedRestores: Int {
        get { Int(failedRestoresCount) }
        set { failedRestoresCount = Int32(clamping: newValue) }
    }
    /// How many times nodes of a cluster wrote the record: each write is one more than the
    /// copy it was made from, and a shared store keeps a write only over an older revision, so
    /// a node writing from an older copy never undoes a newer write (0: not counted, as on one
    /// node, whose store ignores it).
    public var revision: Int64
    /// `liveSince`, `Int64.min` for none: without an optional's tag byte a session is 144
    /// bytes, not 152 (a time that old is no time the hub or a store writes).
    private var liveSinceOrMin: Millis

    /// Set while a scene is live on the session (persisted at connect, cleared at disconnect):
    /// a session that was live when the server was killed counts as active until the restart,
    /// so it is not swept as idle.
    public var liveSince: Millis? {
        get { liveSinceOrMin == .min ? nil : liveSinceOrMin }
        set { liveSinceOrMin = newValue ?? .min }
    }

    public init(id: SessionID, secretHash: SecretHash, owner: OwnerKey, role: SceneConfiguration.SessionRole,
                configuration: String, title: String = "", subtitle: String = "", snapshot: JSONValue? = nil,
                userInfo: JSONObject = [:], restoration: Restoration? = nil,
                createdAt: Millis, lastActiveAt: Millis, failedRestores: Int = 0, liveSince: Millis? = nil,
                revision: Int64 = 0) {
        self.id = id
        self.secretHash = secretHash
        self.owner = owner
        self.role = role
        self.configuration = configuration
        let details = SessionDetails(title: title, subtitle: subtitle, snapshot: snapshot, userInfo: userInfo,
                                     restoration: restoration)
        self.detailsBox = details.isEmpty ? nil : SessionDetailsBox(details)
        self.createdAt = createdAt
        self.lastActiveAt = lastActiveAt
        self.failedRestoresCount = Int32(clamping: failedRestores)
        self.liveSinceOrMin = liveSince ?? .min
        self.revision = revision
    }

    /// The session as a scene sees it on connect. The secret is included only there: it is how
    /// the client resumes later, and it is never listed. Its hash is never included.
    /// - Parameters:
    ///   - secret: the plain secret to hand to the client (only in a `connect` reply), or nil.
    ///   - handBack: whether the restoration activity is handed back (not stale).
    public func json(secret: String?, handBack: Bool) -> JSONValue {
        .object([
            "persistentIdentifier": .string(id.rawValue),
            "secret": secret.map(JSONValue.string),
            "role": .string(role.rawValue),
            "configuration": .string(configuration),
            "title": .string(title),
            "subtitle": .string(subtitle),
            "snapshot": snapshot,
            "userInfo": .object(userInfo),
            "stateRestorationActivity": handBack ? (restoration?.activity.json ?? .null) : .null,
            "restorationMetadata": handBack ? restoration?.metadata.json : nil,
            "createdAt": .int(createdAt),
            "lastActiveAt": .int(lastActiveAt),
        ])
    }
}

extension SceneSession {
    /// The workspace document the window shows, from its restoration activity (see
    /// `Activity.document`).
    public var document: String? { restoration?.activity.document }

    /// Whether its restoration activity targets `content` (a document id, or any content
    /// identifier), compared by bytes (`Identifier`).
    public func shows(_ content: String?) -> Bool {
        guard let content, let target = restoration?.activity.targetContentIdentifier else { return false }
        return Identifier.equal(target, content)
    }

    public func shows(_ document: DocumentID) -> Bool { shows(document.rawValue) }

    /// Forgets a document that no longer exists: the switcher title and snapshot (the
    /// document's title and text) are reset, and the restoration activity loses its target and
    /// title (the document's title); its `userInfo`, the window's own state (a note, say), stays.
    /// The metadata records that the document is gone, so the next connect answers
    /// `document_gone` instead of handing the activity back.
    public mutating func forgetDocument() {
        title = ""
        snapshot = nil
        guard var restoration else { return }
        restoration.activity.targetContentIdentifier = nil
        restoration.activity.title = nil
        restoration.metadata.documentGone = true
        self.restoration = restoration
    }
}

extension SceneSession: TableRecord {
    var tableKey: SessionID { id }
}
