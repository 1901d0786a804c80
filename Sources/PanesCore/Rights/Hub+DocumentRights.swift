import Logging

/// Rights per document, as the request handlers use them: a scene's role for a document, the
/// sharing requests, and telling windows and lists at once when a document's access changes
/// (here, through another node's record, or by a link's expiry). `DocumentRights` owns the state.
extension Hub {
    /// The scene's role for the document; nil when it may not see it.
    func role(_ scene: Scene, for record: DocumentRecord) -> Role? {
        rights.role(of: record, scene: scene.id, user: scene.owner.user, workspaceRole: scene.role, now: now())
    }

    /// Refuses a scene whose role for the document is below `needed`, naming both.
    func requireRole(_ needed: Role, _ scene: Scene, _ record: DocumentRecord, to action: String) throws(PanesError) {
        let role = self.role(scene, for: record) ?? .viewer
        guard role < needed else { return }
        throw Self.roleTooLow(role, needed, record.id, workspaceRole: scene.role, to: action)
    }

    static func roleTooLow(_ role: Role, _ needed: Role, _ id: DocumentID, workspaceRole: Role,
                           to action: String) -> PanesError {
        PanesError(.forbidden, "your role for document \(id) is \(role.rawValue), which may not \(action); "
                       + "it needs \(needed.rawValue) or above (workspace role \(workspaceRole.rawValue), "
                       + "document grants and links combined)", field: "document")
    }

    /// What lets the scene edit the document now, kept with its queued edit (`EditStanding`).
    func editStanding(_ scene: Scene, _ id: DocumentID) -> EditStanding {
        EditStanding(workspaceRole: scene.role, link: rights.link(usedBy: scene.id, for: id), epoch: rights.epoch)
    }

    /// Why a queued edit's sender may no longer edit the document (nil when they may): checked as its batch
    /// is made, right before it goes to the store, so nothing sent before a downgrade or a
    /// revocation lands after it (on this node; another node's change is known here once read).
    /// The sender's scene judges it while live, else what it had when the edit came; the link
    /// it was sent under counts while that link stands. Sent without a link, with nothing changed
    /// since it was checked (`DocumentRights.epoch`), it stands as checked.
    func refusal(of edit: DocumentEdit, _ record: DocumentRecord) -> PanesError? {
        if edit.standing.link == nil, edit.standing.epoch == rights.epoch { return nil }
        let workspaceRole = scenes[edit.context.scene]?.role ?? edit.standing.workspaceRole
        let role = rights.role(of: record, user: edit.author.user, workspaceRole: workspaceRole,
                               link: edit.standing.link, now: now()) ?? .viewer
        guard role < .editor else { return nil }
        return Self.roleTooLow(role, .editor, record.id, workspaceRole: workspaceRole,
                               to: "edit it (its access changed before this edit was applied)")
    }

    /// Whether the user may see the document at all, by grants alone: for drops between users.
    func documentHidden(_ record: DocumentRecord, from user: String) -> Bool {
        rights.access(of: record.id).grant(for: user)?.role == DocumentRole.none
    }

    // MARK: Sharing

    /// The document's grants and links, for its owners.
    func sharesJSON(_ id: DocumentID) -> JSONValue {
        let access = rights.access(of: id)
        return ["document": .string(id.rawValue), "grants": .array(access.grants.map(\.json)),
                "links": .array(access.links.map(\.json))]
    }

    /// Sets (or, with nil, removes) the user's grant for the document.
    mutating func setGrant(_ id: DocumentID, user: String, role: DocumentRole?, scene: Scene) throws(PanesError) -> JSONValue {
        let record = try self.record(id, for: scene)
        try requireRole(.owner, scene, record, to: "share it")
        var access = rights.access(of: id)
        let index = access.grants.firstIndex { Identifier.equal($0.user, user) }
        if let role {
            if let index {
                guard access.grants[index].role != role else { return sharesJSON(id) }
                access.grants[index].role = role
                access.grants[index].grantedBy = scene.owner.user
                access.grants[index].grantedAt = now()
            } else {
                try requireRoom(access, id)
                access.grants.append(DocumentGrant(user: user, role: role, grantedBy: scene.owner.user, grantedAt: now()))
            }
        } else {
            guard let index else { return sharesJSON(id) }
            access.grants.remove(at: index)
        }
        // Taken away: the user's own sessions that show it forget it (title, preview, target),
        // in the same batch, so their switcher keeps nothing of it.
        let forgotten = role == DocumentRole.none ? forgetTakenDocument(id, record, from: user) : []
        change(id, access, record, by: scene, "grant \(role?.rawValue ?? "removed") for \(user)", also: forgotten)
        return sharesJSON(id)
    }

    /// A new link; the reply carries its token, which is kept nowhere but with the caller. Sent
    /// with an `idempotencyKey` (`key`), the token is derived (`DocumentRights.keyedToken`), so a
    /// retry answered from the record gets it again (`CreateDocumentLinkRequest.replayedResult`).
    mutating func createLink(_ id: DocumentID, role: Role, lifetimeMs: Int64, scene: Scene,
                             key: RequestKeySlot?) throws(PanesError) -> JSONValue {
        let record = try self.record(id, for: scene)
        try requireRole(.owner, scene, record, to: "share it")
        var access = rights.access(of: id)
        let now = now()
        if shareCount(access, now: now) >= settings.maxSharesPerDocument {
            // Links that open nothing any more make room first.
            access.links.removeAll { !$0.isValid(at: now) }
        }
        try requireRoom(access, id)
        let linkID = ids.token("link_")
        let token = key.flatMap { rights.keyedToken($0, link: linkID, mac: secretHasher) } ?? "pdl_" + ids.secret() + ids.secret()
        let link = DocumentLink(id: linkID, tokenHash: secretHasher.hash(token), role: role,
                                createdBy: scene.owner.user, createdAt: now, expiresAt: now + lifetimeMs)
        access.links.append(link)
        change(id, access, record, by: scene, "link \(link.id) created (\(role.rawValue))")
        return ["document": .string(id.rawValue), "link": link.json, "token": .string(token)]
    }

    /// Revokes a link: scenes that opened the document through it lose what it gave at once.
    mutating func revokeLink(_ id: DocumentID, link linkID: String, scene: Scene) throws(PanesError) -> JSONValue {
        let record = try self.record(id, for: scene)
        try requireRole(.owner, scene, record, to: "share it")
        var access = rights.access(of: id)
        guard let index = access.links.firstIndex(where: { Identifier.equal($0.id, linkID) }) else {
            throw PanesError(.invalidField, "document \(id) has no link `\(linkID)`", field: "link")
        }
        guard access.links[index].revokedAt == nil else { return sharesJSON(id) }
        access.links[index].revokedAt = now()
        change(id, access, record, by: scene, "link \(linkID) revoked")
        return sharesJSON(id)
    }

    private func shareCount(_ access: DocumentAccess, now: Millis) -> Int {
        access.grants.count + access.links.count { $0.isValid(at: now) }
    }

    private func requireRoom(_ access: DocumentAccess, _ id: DocumentID) throws(PanesError) {
        let count = access.grants.count + access.links.count
        guard count < settings.maxSharesPerDocument else {
            throw PanesError(.tooMany, "document \(id) already has \(count) grants and links (setting "
                                 + "`maxSharesPerDocument`); remove some")
        }
    }

    /// Applies a change made here: stored, then everyone whose view moved is told.
    /// - Parameter also: commands that go in the same batch (`forgetTakenDocument`'s).
    private mutating func change(_ id: DocumentID, _ access: DocumentAccess, _ record: DocumentRecord, by scene: Scene,
                                 _ what: String, also: [StoreCommand] = []) {
        var access = access
        access.version = rights.access(of: id).version + 1
        let before = listObservers(seeing: record)
        rights.set(id, access)
        persist([.putDocumentAccess(id, access)] + also)
        logger.info("document access changed", metadata: ["document": "\(id)", "by": "\(scene.owner.user)",
                                                          "change": "\(what)"])
        accessChanged(id, listsBefore: before)
    }

    /// The user's sessions whose window shows the document forget it (as when it is deleted,
    /// `SceneSession.forgetDocument`); their switchers are told. Returns the writes.
    private mutating func forgetTakenDocument(_ id: DocumentID, _ record: DocumentRecord, from user: String) -> [StoreCommand] {
        var commands: [StoreCommand] = []
        var owners: Set<OwnerKey> = []
        for sessionID in sessionIDs(showing: id, in: record.workspace) {
            guard var session = sessions[sessionID], Identifier.equal(session.owner.user, user) else { continue }
            session.forgetDocument()
            sessions.put(session)
            commands.append(.putSession(session))
            owners.insert(session.owner)
        }
        for owner in owners.sorted() { sessionsChanged(for: owner) }
        return commands
    }

    // MARK: Opening through a link

    /// Checks a link presented with `openDocument` and lets the scene use it. Every refusal
    /// reads the same for a token that is unknown, of another workspace or of another document.
    mutating func useLink(_ token: String, for id: DocumentID, scene: Scene) throws(PanesError) {
        let refused = PanesError(.forbidden, "the link does not open document \(id) in this workspace", field: "link")
        guard let (document, link) = rights.link(tokenHash: secretHasher.hash(token)), document == id,
              let record = documents.records[id], record.belongs(to: scene.owner.workspace)
        else { throw refused }
        if link.revokedAt != nil {
            throw PanesError(.forbidden, "the link to document \(id) was revoked", field: "link")
        }
        guard link.isValid(at: now()) else {
            throw PanesError(.forbidden, "the link to document \(id) expired", field: "link")
        }
        rights.use(link, of: id, by: scene.id)
    }

    // MARK: Telling

    /// The list observers of the document's workspace that may see it now.
    func listObservers(seeing record: DocumentRecord) -> Set<SceneID> {
        Set(documents.observers(in: record.workspace).filter { id in
            scenes[id].map { role($0, for: record) != nil } == true
        })
    }

    /// The document's access changed: each window that has it open and whose role moved hears
    /// `documentAccessChanged` (one that lost it is taken out of it), and each list observer
    /// that gained or lost sight of it hears `documentsChanged` (`shared`, `unshared`).
    mutating func accessChanged(_ id: DocumentID, listsBefore: Set<SceneID>) {
        guard let record = documents.records[id] else { return }
        for participant in documents.open[id]?.orderedParticipants ?? [] {
            guard let scene = scenes[participant.scene] else { continue }
            let role = self.role(scene, for: record)
            guard role != rights.toldRole(scene.id, id) else { continue }
            send(.event(.documentAccessChanged(id, role)), to: scene.connection)
            if let role { rights.tell(scene.id, id, role) } else { leave(id, scene: scene.id) }
        }
        let after = listObservers(seeing: record)
        let changed = listsBefore.symmetricDifference(after).compactMap { scenes[$0] }.sorted { $0.id < $1.id }
        guard !changed.isEmpty else { return }
        let summary = documents.summary(id, limit: settings.maxListedParticipants)
        for scene in changed {
            let shared = after.contains(scene.id)
            send(.event(.documentsChanged(shared ? .shared : .unshared, shared ? summary : record.json(participants: []))),
                 to: scene.connection)
        }
    }

    /// Links in use that expired: their scenes lose what they gave.
    mutating func expireLinks(now: Millis) {
        for id in rights.expired(now: now) {
            guard let record = documents.records[id] else { continue }
            accessChanged(id, listsBefore: listObservers(seeing: record))
        }
    }

    /// Another node changed the document's access: taken unless this node's copy is newer.
    mutating func takeRemoteAccess(_ id: DocumentID, _ access: DocumentAccess) {
        guard let record = documents.records[id] else { return }
        let before = listObservers(seeing: record)
        if rights.take(id, access) { accessChanged(id, listsBefore: before) }
    }
}

extension ServerEvent {
    /// The scene's role for an open document changed; `none` closed it for the scene.
    static func documentAccessChanged(_ document: DocumentID, _ role: Role?) -> ServerEvent {
        ServerEvent("documentAccessChanged", ["document": .string(document.rawValue),
                                              "role": .string(role?.rawValue ?? DocumentRole.none.rawValue)])
    }
}
