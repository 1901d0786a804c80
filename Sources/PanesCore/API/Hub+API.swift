/// The HTTP API inside the hub: each API request is a *service scene* for the length of the
/// request, a scene with no session and no socket, acting in the route's workspace as the
/// principal's actor (`api:<id>`, `service:<sub>`, a user token's `sub`) or the route's user,
/// with the principal's role (`APICall.role`): the backend is an owner, a user's token has the
/// user's role, and every request is checked per document like a window's. Its writes are the
/// protocol's own requests, dispatched like a window's (`dispatch`): the same checks, the same
/// commits, the same fan-out to every window, the same request keys; its reply, held like any
/// other until what it reports is durable, is what the runtime turns into the HTTP answer. The
/// service scene ends with that reply (`send`). It observes nothing, has no presence, and is
/// never a document's participant: an edit through the API loads the document if no window
/// holds it, and the document goes again after the commit.
extension Hub {
    /// Set in the connection ids the runtime gives API requests (transport ids never reach it).
    public static let serviceConnectionBit: UInt64 = 1 << 62

    public static func isServiceConnection(_ connection: ConnectionID) -> Bool { connection.rawValue & serviceConnectionBit != 0 }

    /// Handles one API request, answered on `connection` (a service id) now or later.
    mutating func serveAPI(_ connectionID: ConnectionID, _ call: APICall) {
        let sceneID = SceneID("api-\(connectionID.rawValue & ~Self.serviceConnectionBit)")
        let owner = OwnerKey(workspace: call.route.workspace, user: call.user)
        // A service connection is never sent frames, so its rate limit is never spent.
        var connection = Connection(id: connectionID, peer: nil, bucket: TokenBucket.Level(burst: 1, now: monotonic()))
        connection.phase = .scene(sceneID)
        connections.open(connection)
        let scene = Scene(id: sceneID, connection: connectionID, session: SessionID(""), owner: owner, userName: call.name,
                          role: call.role, traits: Traits(), clientVersion: "http")
        scenes.addService(scene)
        serviceActors[connectionID] = call.actor
        let id = RequestID.int(1)
        switch call.route.operation {
        case .request(let json):
            if call.readOnly, call.route.writes {
                fail(id, request: json["type"]?.stringValue ?? "(api)",
                     PanesError(.forbidden, "`\(call.actor)` has read access only; this request writes"), to: connectionID)
                return
            }
            switch decoder.decode(json) {
            case .failure(let failure):
                metrics.countRequest(named: "(invalid)")
                fail(id, request: failure.type, failure.error, to: connectionID)
            case .success(let request):
                metrics.countRequest(request)
                dispatch(request, on: connectionID)
            }
        case .listDocuments:
            metrics.countRequest(named: "listDocuments")
            send(.reply(id, result: documentList(for: scene)), to: connectionID)
        case .readDocument(let document, let revision):
            metrics.countRequest(named: "readDocument")
            do throws(PanesError) {
                if let result = try readDocument(document, at: revision, scene: scene, requestID: id) {
                    send(.reply(id, result: result), to: connectionID)
                }
            } catch {
                fail(id, request: "readDocument", error, to: connectionID)
            }
        case .readPreferences:
            metrics.countRequest(named: "readPreferences")
            let domain = PreferenceDomain(workspace: owner.workspace, user: call.route.user)
            send(.reply(id, result: preferenceValues(domain)), to: connectionID)
        }
    }

    /// A service scene's reply left: the scene ends. It holds nothing (no observation, no
    /// presence, no open document), so nothing else needs telling.
    mutating func endService(_ connectionID: ConnectionID) {
        serviceActors[connectionID] = nil
        guard let connection = connections.remove(connectionID) else { return }
        let sceneID: SceneID
        switch connection.phase {
        case .scene(let id), .closing(let id?): sceneID = id
        default: return
        }
        guard let scene = scenes.removeService(sceneID) else { return }
        documentsSceneWillEnd(scene)
    }

    /// The workspace's documents the scene may see, sorted as `observeDocuments` sorts them:
    /// every one for the backend (an owner), a user's own view for a user's token.
    func documentList(for scene: Scene) -> JSONValue {
        let list = documents.records(in: scene.owner.workspace)
            .filter { role(scene, for: $0) != nil }
            .sorted { ($0.title.lowercased(), $0.id) < ($1.title.lowercased(), $1.id) }
            .map { documents.summary($0.id, limit: settings.maxListedParticipants) }
        return ["documents": .array(list)]
    }

    /// A document's text now (from memory when a window holds it), or at `revision`: read from
    /// the store, which has it from the latest snapshot on. Nil: answered once loaded.
    mutating func readDocument(_ id: DocumentID, at revision: Int64?, scene: Scene, requestID: RequestID)
        throws(PanesError) -> JSONValue? {
        let record = try self.record(id, for: scene)
        if let revision, revision > record.revision, !sharesStore {
            throw PanesError(.revisionInFuture, "revision \(revision) is newer than the document's \(record.revision)",
                             field: "revision")
        }
        if let document = documents.open[id], revision == nil || revision == document.revision {
            return documentText(id, revision: document.revision, text: String(document.text))
        }
        loadForService(id, PendingOpen(scene: scene.id, requestID: requestID, revision: revision, purpose: .read))
        return nil
    }

    /// Waits for the document's load (starting it if none is on its way) on behalf of a
    /// service scene: to read it, or to edit it when no window holds it.
    mutating func loadForService(_ id: DocumentID, _ pending: PendingOpen) {
        if documents.waitForLoad(id, pending) { effects.append(.load(.document(id, retention: OpenDocument.Retention(settings).loadCount))) }
    }

    /// Answers a read that waited for the document's load.
    mutating func answerRead(_ pending: PendingOpen, _ stored: StoredDocument, connection: ConnectionID) {
        do throws(PanesError) {
            let revision = pending.revision ?? documents.open[stored.record.id]?.revision ?? stored.record.revision
            let text = try Self.text(of: stored, at: revision)
            send(.reply(pending.requestID, result: documentText(stored.record.id, revision: revision, text: text)),
                 to: connection)
        } catch {
            fail(pending.requestID, request: "readDocument", error, to: connection)
        }
    }

    /// The text at `revision`: the snapshot with the logged operations up to it applied.
    static func text(of stored: StoredDocument, at revision: Int64) throws(PanesError) -> String {
        let latest = stored.operations.last?.revision ?? stored.snapshotRevision
        guard revision <= max(latest, stored.snapshotRevision) else {
            throw PanesError(.revisionInFuture, "revision \(revision) is newer than the document's \(latest)", field: "revision")
        }
        guard revision >= stored.snapshotRevision else {
            throw PanesError(.revisionUnavailable, "revision \(revision) is older than the store keeps: its text is kept from "
                                 + "revision \(stored.snapshotRevision) on (settings `snapshotEvery`, `snapshotEveryBytes`)",
                             field: "revision")
        }
        var text = Rope(stored.snapshotText)
        for entry in stored.operations where entry.revision > stored.snapshotRevision && entry.revision <= revision {
            text = try entry.operation.apply(to: text)
        }
        return String(text)
    }

    func documentText(_ id: DocumentID, revision: Int64, text: String) -> JSONValue {
        ["document": documents.summary(id, limit: settings.maxListedParticipants), "revision": .int(revision),
         "text": .string(text)]
    }

    /// A domain's stored values, each with the version it was written at, and the domain's version.
    func preferenceValues(_ domain: PreferenceDomain) -> JSONValue {
        let state = preferences.domain(domain)
        // Sorted once: a domain may hold `maxPreferenceKeys` keys.
        let values = JSONObject(uniqueKeysWithValues: (state?.values ?? [:]).lazy.map { key, value in
            (key, ["value": value.value, "version": .int(value.version)] as JSONValue)
        })
        return ["domain": .string(domain.kind), "version": .int(state?.version ?? 0), "values": .object(values)]
    }
}
