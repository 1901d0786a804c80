import Logging

/// Following what other nodes write to the shared store. A `ChangeNotice` is only a hint: the
/// node reads the change itself from the store's logs (preference changes, document
/// operations, the record sequence), applies it as if it had been made here, and tells its
/// own scenes. Applying in log order with the logged versions is what makes every node tell
/// every observer the same changes, in the same order, with the same versions.
///
/// A channel with this node's own commit in flight is left alone until the outcome is in:
/// either the commit wins (and the notice was about it, or the next catch-up reads the rest)
/// or it conflicts, and the conflict path reads what the other node wrote.
extension Hub {
    /// Whether this hub is a node of a cluster (its store is shared).
    public var isClustered: Bool { node != nil }

    mutating func notice(_ notice: ChangeNotice) {
        guard isClustered else { return }
        switch notice {
        case .channel(.preferences(let domain), let version):
            followPreferences(domain, to: version)
        case .channel(.document(let id), let revision):
            followDocument(id, to: revision)
        case .documentEdited(let id, let revision, let length, let modifiedAt):
            followDocument(id, to: revision, length: length, modifiedAt: modifiedAt)
        case .channel(.drag, _):
            break  // the winner of a drag's ending tells every node itself (`dragEnded`)
        case .channel(.session, _), .channel(.sessionRecord, _), .records:
            if case .records(let cursor) = notice, cursor <= cluster.recordCursor { return }
            loadRecordChanges()
        case .signal(let signal):
            received(signal)
        case .nodesExpired(let nodes):
            nodesExpired(nodes)
        case .nodesChecked(let gone):
            nodesChecked(gone)
        case .leaseLost:
            leaseLost()
        case .resubscribed:
            // The store answers again: reads waiting out a backoff go now. Anything may have
            // moved while nobody listened: look at everything held.
            cluster.readBackoff.succeeded()
            cluster.recordRetryAt = nil
            loadRecordChanges()
            signal(.scenesWanted, to: nil)
            // Domains held here, and those observed here that another node may have started.
            let domains = Set(preferences.domains.keys).union(preferences.observers.keys)
            for domain in domains.sorted() {
                followPreferences(domain, to: .max)
            }
            for id in documents.open.keys.sorted() { followDocument(id, to: .max) }
        }
    }

    // MARK: Preferences

    /// Reads the domain's changes past the version held here, unless a commit of this node's
    /// is in flight on it (then after that commit).
    mutating func followPreferences(_ domain: PreferenceDomain, to version: Int64) {
        guard version > (preferences.domains[domain]?.version ?? 0) else { return }
        if commits.preferenceWriters[domain]?.busy == true {
            cluster.preferencesBehind[domain] = max(cluster.preferencesBehind[domain] ?? 0, version)
            return
        }
        catchUpPreferences(domain, afterConflict: false)
    }

    /// Starts reading what other nodes wrote to the domain; its writes wait meanwhile.
    mutating func catchUpPreferences(_ domain: PreferenceDomain, afterConflict: Bool) {
        cluster.preferencesBehind[domain] = nil
        commits.preferenceWriters[domain, default: ChannelQueue()].catchingUp = true
        commits.preferenceWriters[domain]?.afterConflict = afterConflict
        let held = preferences.domains[domain]?.version ?? 0
        effects.append(.load(isClustered ? .preferenceChanges(domain, after: held) : .preferences(domain)))
    }

    /// A catch-up's changes: applied in version order as long as they follow on from the
    /// version held; a gap (the log was pruned) reads the whole domain instead.
    mutating func preferenceChangesLoaded(_ domain: PreferenceDomain, _ changes: [PreferenceChange]?, failure: String?) {
        guard failure == nil, let changes else {
            if failure == nil {
                // Pruned past what this node holds: the whole domain, diffed, is the best there is.
                effects.append(.load(.preferences(domain)))
                return
            }
            preferencesLoaded(domain, nil, failure: failure)
            return
        }
        cluster.readBackoff.succeeded()
        let afterConflict = commits.preferenceWriters[domain]?.afterConflict ?? false
        commits.preferenceWriters[domain]?.catchingUp = false
        commits.preferenceWriters[domain]?.afterConflict = false
        let kind: DomainKind = domain.user == nil ? .workspace : .user
        var applied = 0
        for change in changes.sorted(by: { $0.version < $1.version }) {
            let held = preferences.domains[domain]?.version ?? 0
            if change.version <= held { continue }
            guard change.version == held + 1 else {
                logger.warning("preference log has a gap; reading the whole domain",
                               metadata: ["domain": "\(domain)", "held": "\(held)", "next": "\(change.version)"])
                commits.preferenceWriters[domain, default: ChannelQueue()].catchingUp = true
                effects.append(.load(.preferences(domain)))
                return
            }
            applied += 1
            guard let key = try? KeyPath(change.keyPath) else {
                preferences.domains[domain, default: PreferenceDomainState()].apply(version: change.version)
                continue
            }
            let old = preferences.effective(domain, kind, key)?.value
            preferences.domains[domain, default: PreferenceDomainState()].apply(change.keyPath, change.value,
                                                                                version: change.version)
            notifyObservers(of: key, in: domain, kind: kind, version: change.version, old: old)
        }
        if afterConflict && applied == 0 {
            failStuckPreferences(domain)
            return
        }
        if commits.preferenceWriters[domain]?.isIdle == true { commits.preferenceWriters[domain] = nil }
        startPreferenceBatch(domain)
    }

    /// Before a domain's next batch: catches up first if a notice came while it was busy.
    /// - Returns: whether a catch-up started (the batch waits for it).
    mutating func catchUpPreferencesIfBehind(_ domain: PreferenceDomain) -> Bool {
        guard let behind = cluster.preferencesBehind[domain] else { return false }
        guard behind > (preferences.domains[domain]?.version ?? 0) else {
            cluster.preferencesBehind[domain] = nil
            return false
        }
        catchUpPreferences(domain, afterConflict: false)
        return true
    }

    // MARK: Documents

    /// Reads the operations other nodes appended to an open document. A document not open
    /// here has its record moved, for the lists: its revision, and with a notice that says them
    /// (`ChangeNotice.documentEdited`) its length and last edit, which list observers here then
    /// hear of as a modification (at most every `documentListIntervalMs`, as for one edited
    /// here). Without them a list on this node showed the new revision with the old length,
    /// and never told its observers.
    mutating func followDocument(_ id: DocumentID, to revision: Int64, length: Int? = nil, modifiedAt: Millis? = nil) {
        guard let document = documents.open[id] else {
            if revision != .max, var record = documents.records[id], revision > record.revision {
                record.revision = revision
                if let length { record.length = length }
                if let modifiedAt { record.modifiedAt = max(record.modifiedAt, modifiedAt) }
                documents.records[id] = record
                if length != nil { markModified(id, preview: nil) }
            }
            return
        }
        guard revision > document.revision else { return }
        if commits.documentWriters[id]?.busy == true {
            cluster.documentsBehind[id] = max(cluster.documentsBehind[id] ?? 0, revision)
            return
        }
        catchUpDocument(id, afterConflict: false)
    }

    mutating func catchUpDocument(_ id: DocumentID, afterConflict: Bool) {
        metrics.documentCatchUps[afterConflict ? "conflict" : "notice", default: 0] += 1
        cluster.documentsBehind[id] = nil
        commits.documentWriters[id, default: ChannelQueue()].catchingUp = true
        commits.documentWriters[id]?.afterConflict = afterConflict
        if isClustered, let document = documents.open[id] {
            effects.append(.load(.operations(id, after: document.revision)))
        } else {
            effects.append(.load(.document(id, retention: OpenDocument.Retention(settings).loadCount)))
        }
    }

    /// Operations another node committed: applied and sent to this node's scenes of the
    /// document, as the single-node conflict path does with a whole reload.
    mutating func operationsLoaded(_ id: DocumentID, _ operations: [StoredOperation]?, failure: String?) {
        guard failure == nil, let operations else {
            if failure == nil, documents.open[id] != nil {
                // Compacted past this node's revision (or gone): the snapshot path decides.
                effects.append(.load(.document(id, retention: OpenDocument.Retention(settings).loadCount)))
                return
            }
            documentCaughtUp(id, nil, failure: failure ?? "document \(id) is no longer stored")
            return
        }
        let afterConflict = commits.documentWriters[id]?.afterConflict ?? false
        commits.documentWriters[id]?.catchingUp = false
        commits.documentWriters[id]?.afterConflict = false
        let applied = applyCommitted(operations, to: id)
        retryOpens(document: id)
        if afterConflict && applied == 0 {
            failStuckEdits(id)
            return
        }
        settleWriter(id)
        startDocumentBatch(id)
    }

    /// Before a document's next batch: catches up first if a notice came while it was busy.
    mutating func catchUpDocumentIfBehind(_ id: DocumentID) -> Bool {
        guard let behind = cluster.documentsBehind[id] else { return false }
        guard let document = documents.open[id], behind > document.revision else {
            cluster.documentsBehind[id] = nil
            return false
        }
        catchUpDocument(id, afterConflict: false)
        return true
    }

    // MARK: Records

    mutating func loadRecordChanges() {
        guard !cluster.recordsLoading, cluster.recordRetryAt == nil else {
            cluster.recordsWanted = true
            return
        }
        cluster.recordsLoading = true
        cluster.recordLoadsStarted += 1
        cluster.recordLoadInFlight = cluster.recordLoadsStarted
        effects.append(.load(.recordChanges(after: cluster.recordCursor)))
    }

    /// A record load that waited out its backoff starts now, if one is still wanted.
    mutating func retryRecordLoad(now: Millis) {
        guard let at = cluster.recordRetryAt, at <= now else { return }
        cluster.recordRetryAt = nil
        if cluster.recordsWanted {
            cluster.recordsWanted = false
            loadRecordChanges()
        }
    }

    /// Sessions, claims and document records other nodes wrote: taken in, and the switchers
    /// and document lists of this node's scenes told.
    mutating func recordChangesLoaded(_ changes: RecordChanges?, failure: String?) {
        cluster.recordsLoading = false
        // This read's number, taken before the next read (if wanted) is started below.
        let finished = cluster.recordLoadInFlight
        defer {
            if cluster.recordsWanted {
                cluster.recordsWanted = false
                loadRecordChanges()
            }
            // Connects that waited for this read: it has what was committed before they came.
            let ready = cluster.recordWaiters.filter { $0.after < finished }
            cluster.recordWaiters.removeAll { $0.after < finished }
            for entry in ready {
                guard failure != nil, connections[entry.waiter.connection] != nil else {
                    retryConnect(entry.waiter, afterRecords: true)
                    continue
                }
                // The read that was to find the session failed: not knowing it is no reason to
                // say it does not exist (the client would start over, a new session).
                connections[entry.waiter.connection]?.phase = .awaitingConnect
                fail(entry.waiter.requestID, request: "connect", PanesError(
                    .storageFailed, "the session could not be read from the store; retry",
                    retryAfterMs: Int(cluster.readBackoff.currentMs ?? Backoff.sharedStore.minMs)),
                     to: entry.waiter.connection)
            }
            retryRefreshes(after: finished)
            retryOpens(records: finished)
            // Only on a read that succeeded: the holder's last writes must be in.
            if failure == nil {
                cluster.recordsReadThrough = max(cluster.recordsReadThrough, finished)
                claimsLeftBehind(readBy: finished)
            }
            resumeTakeovers(readFailed: failure)
        }
        guard let changes, failure == nil else {
            // Tried again after a backoff, not at once: a store that is away fails a read in
            // microseconds, and an immediate retry made a node read (and log) ~21,000 times a
            // second through an outage.
            let delay = cluster.readBackoff.failed()
            cluster.recordRetryAt = monotonic() + delay
            logLimited(.error, "reading other nodes' changes failed",
                       metadata: ["error": "\(failure ?? "?")", "retryInMs": "\(delay)"])
            cluster.recordsWanted = true
            return
        }
        cluster.readBackoff.succeeded()
        // Sessions written here since the load was asked for: our copies are newer than its.
        let writtenMeanwhile = cluster.writtenDuringRecordLoad
        cluster.writtenDuringRecordLoad = []
        guard changes.cursor > cluster.recordCursor else { return }
        cluster.recordCursor = changes.cursor
        var owners: Set<OwnerKey> = []
        for (id, claim) in changes.claims where claim.epoch >= (cluster.claims[id]?.epoch ?? 0)
            && !(writtenMeanwhile.contains(id) && claim.node == node) {
            // Who holds a session is part of its switcher entry (live elsewhere or not).
            if cluster.claims[id]?.node != claim.node, let owner = sessions[id]?.owner { owners.insert(owner) }
            cluster.claims[id] = claim
            // A connect here lost the claim to another node: now that it is known, ask it.
            askHolder(id)
        }
        for session in changes.sessions {
            // A copy older than this node's own last write (read before that write was in) is
            // not taken; a newer one written while the window is live here is merged in.
            guard isCurrent(session) else { continue }
            let known = sessions[session.id] != nil
            if take(session) != nil {
                if !known {
                    sessionsByOwner[session.owner, default: []].insert(session.id)
                    idleDeadlines.push(session.id, at: session.lastActiveAt + Millis(settings.sessionMaxIdleMs))
                }
                owners.insert(session.owner)
            }
            // A connect waiting for another node to let go of this session can go on.
            if cluster.claims[session.id]?.node == nil { resolvePendingConnects(of: session.id) }
        }
        for id in changes.deletedSessions where sessions[id] != nil {
            cluster.claims[id] = nil
            forgetRevisions(of: id)
            discard(id, animation: .standard, reason: "discarded on another node", persisted: true)
        }
        for record in changes.documents { takeRemoteRecord(record) }
        for id in changes.deletedDocuments { forgetRemotelyDeleted(id) }
        for (id, access) in changes.access.sorted(by: { $0.key < $1.key }) { takeRemoteAccess(id, access) }
        for owner in owners.sorted() { sessionsChanged(for: owner) }
    }

    /// A document record created or renamed on another node.
    mutating func takeRemoteRecord(_ record: DocumentRecord) {
        guard var held = documents.records[record.id] else {
            documents.insert(record)
            announce(.created, record.id, workspace: record.workspace)
            return
        }
        let renamed = held.title != record.title
        held.title = record.title
        if documents.open[record.id] == nil {
            held.revision = max(held.revision, record.revision)
            held.length = record.length
            held.modifiedAt = max(held.modifiedAt, record.modifiedAt)
        }
        documents.records[record.id] = held
        if renamed { announce(.renamed, record.id, workspace: record.workspace) }
    }

    /// A document another node deleted: its scenes here are told, its edits and opens waiting
    /// here fail, and the list observers hear of it. The deleting node rewrote the sessions
    /// that referred to it; those rewrites arrive as session records.
    mutating func forgetRemotelyDeleted(_ id: DocumentID) {
        guard let record = documents.records[id] else { return }
        let removed = takeOut(id, record)
        broadcast(.event(.documentDeleted(id, by: .null)),
                  to: removed.holders.compactMap { scenes[$0]?.connection }.sorted())
        failWaiting(on: removed)
        announce(.deleted, id, workspace: record.workspace, summary: removed.summary, by: .null, record: record)
        rights.remove(id)
    }

    // MARK: Leases

    /// Whether another node, still alive, holds the session.
    func claimedElsewhere(_ session: SessionID) -> Bool {
        guard let holder = cluster.claims[session]?.node else { return false }
        return holder != node && !cluster.expired.contains(holder)
    }

    /// Asks the store for the session's lease: a compare-and-set on its epoch, so of two nodes
    /// claiming at once exactly one wins, and the winner's epoch fences the loser's writes.
    mutating func claim(_ session: SessionID, for pending: PendingConnect?) {
        if let pending, takeoverMustWait(session) {
            // Parked without a deadline: the read decides (and fails it, if it cannot be made).
            pendingConnects[session, default: []].append(pending)
            connections[pending.connection]?.phase = .answering(session)
            cluster.takeoversWaiting.insert(session)
            return
        }
        let epoch = cluster.claims[session]?.epoch ?? 0
        let claim = SessionClaim(node: node, epoch: epoch + 1)
        let id = commits.makeID()
        commits.pending[id] = .claim(session, claim, pending)
        cluster.claiming.insert(session)
        if let pending { connections[pending.connection]?.phase = .answering(session) }
        submit(Commit(id: id, channel: .session(session), base: epoch,
                      commands: [.claimSession(session, claim)]))
    }

    /// A session made here: nobody else can know it yet, so the claim waits for nothing.
    /// A session made here is claimed in the same write that first stores it, so no other
    /// node can ever read it unclaimed and attach to it too.
    /// - Returns: the command to persist with the session (none on a single node).
    mutating func claimNew(_ session: SessionID) -> [StoreCommand] {
        guard isClustered else { return [] }
        let claim = SessionClaim(node: node, epoch: 1)
        cluster.claims[session] = claim
        return [.claimSession(session, claim)]
    }

    /// Lets go of a session whose scene ended here, so a reload on another node resumes it
    /// at once. A release that conflicts lost nothing: someone took the session over already.
    mutating func release(_ session: SessionID) {
        guard isClustered, let held = cluster.claims[session], held.node == node,
              !cluster.claiming.contains(session), sessions[session] != nil else { return }
        let released = SessionClaim(node: nil, epoch: held.epoch)
        let id = commits.makeID()
        commits.pending[id] = .claim(session, released, nil)
        submit(Commit(id: id, channel: .session(session), base: held.epoch,
                      commands: [.claimSession(session, released)]))
    }

    mutating func claimCommitted(_ session: SessionID, _ claim: SessionClaim, _ pending: PendingConnect?,
                                 _ outcome: CommitOutcome) {
        if claim.node != nil { cluster.claiming.remove(session) }
        switch outcome {
        case .committed:
            if claim.node == nil { cluster.releaseBackoff.succeeded() }
            if claim.epoch >= (cluster.claims[session]?.epoch ?? 0) { cluster.claims[session] = claim }
            guard let pending else { return }
            guard connections[pending.connection] != nil, sessions[session] != nil else {
                // The connect went away meanwhile: nobody is live on the session.
                abandonKeyed(ReplyRef(connection: pending.connection, id: pending.requestID))
                release(session)
                resolvePendingConnects(of: session)
                return
            }
            if liveScenes[session] == nil {
                attach(pending.connection, requestID: pending.requestID, request: pending.request,
                       identity: pending.identity, session: session, secret: Self.provenSecret(of: pending.request),
                       handedOver: pending.handedOver, created: pending.request.replay?.created ?? false,
                       forkedFrom: pending.request.replay?.forkedFrom)
            } else {
                fork(session, for: pending)
            }
            resolvePendingConnects(of: session)
        case .unknown:
            // Answered early (`commitOutcomeUnknown`); the real outcome comes later.
            return
        case .conflict, .behind, .recorded:
            // Another node claimed it first: it is live there, for now. Read who holds it and
            // wait, like any connect for a session live elsewhere.
            guard var pending else { return }
            // Who won is known once the records are read; the holder is asked then (or now, if
            // this node has read it already).
            loadRecordChanges()
            pending.deadline = monotonic() + Millis(settings.nodeLeaseMs + 2 * settings.nodeHeartbeatMs)
            pending.decidingCheck = nil
            if connections[pending.connection] != nil {
                wait(pending, for: session)
                askHolder(session)
            }
        case .failed(let reason):
            logLimited(.error, "session claim failed", metadata: ["session": "\(session)", "reason": "\(reason)"])
            // A release that could not be written leaves the session claimed by this node with
            // no scene: a reload through another node would wait for it, then fork.
            if claim.node == nil, pending == nil { releaseFailed(session) }
            guard let pending, connections[pending.connection] != nil else { return }
            connections[pending.connection]?.phase = .awaitingConnect
            fail(pending.requestID, request: "connect",
                 PanesError(.storageFailed, "the session could not be claimed; retry", retryAfterMs: 1_000),
                 to: pending.connection)
        }
    }

    /// Other nodes are gone: the sessions they held are free, and connects waiting for them
    /// take them over (with a new epoch, which fences anything the dead node still sends).
    mutating func nodesExpired(_ nodes: [NodeID]) {
        // The nodes expired now: one that renewed late drops out of the set again.
        let current = Set(nodes).subtracting([node].compactMap { $0 })
        let newly = current.subtracting(cluster.expired)
        cluster.expired = current
        guard !newly.isEmpty else { return }
        logger.notice("nodes expired; their sessions can be taken over", metadata: ["nodes": "\(newly.sorted())"])
        // What they wrote before their lease ended is committed (the end waited for it), but
        // perhaps not read here yet: a session of theirs is taken over once it is.
        cluster.goneReadNeeded = readRecordsFromNow()
        dropPresence(of: newly)
        let freed = cluster.claims.filter { $0.value.node.map(newly.contains) == true }.map(\.key)
        for session in freed.sorted() { resolvePendingConnects(of: session) }
        var owners = dropRemoteScenes(of: newly)
        for session in freed { if let owner = sessions[session]?.owner { owners.insert(owner) } }
        for owner in owners.sorted() { sessionsChanged(for: owner) }
    }

    /// This node may no longer hold its sessions: every scene is closed with `nodeLost`, so its
    /// client reconnects (through the load balancer, to a node that can serve it).
    mutating func leaseLost() {
        logger.critical("this node lost its lease; closing every scene so they resume elsewhere")
        for sceneID in scenes.keys.sorted() {
            guard let scene = scenes[sceneID] else { continue }
            close(scene.connection, .nodeLost, reason: "this node lost its lease; reconnect")
            detach(sceneID, abnormal: false)
        }
    }

    /// This node's identity may no longer serve (its lease has ended) and the runtime gives
    /// this hub up for one built afresh: every connection is closed with `code`, and nothing is
    /// written (the store refuses this identity's writes; the sessions' claims are ended with it).
    /// - Returns: the closes, one per connection.
    public mutating func closeEveryConnection(_ code: CloseCode, reason: String) -> [Effect] {
        for id in connections.keys.sorted() { close(id, code, reason: reason) }
        defer { effects.removeAll(keepingCapacity: true) }
        return effects
    }

    // MARK: Takeovers

    /// Starts a record load that reads everything committed up to now (after the one in
    /// flight, if any), and returns its number (`ClusterState.recordLoadsStarted`).
    mutating func readRecordsFromNow() -> Int {
        let next = cluster.recordLoadsStarted + 1
        loadRecordChanges()
        return next
    }

    /// Whether taking the session over from its holder, a node found gone, waits for the record
    /// read started when it was found gone: the holder's last writes of the session (a window
    /// writing through it up to the end) are then in, and the window resumes with them.
    func takeoverMustWait(_ session: SessionID) -> Bool {
        guard let holder = cluster.claims[session]?.node, holder != node, cluster.expired.contains(holder) else {
            return false
        }
        return cluster.recordsReadThrough < cluster.goneReadNeeded
    }

    /// A record load finished: takeovers that waited for it go on, or, when it failed, their
    /// connects are told to retry (whether the holder's last writes are in cannot be known).
    mutating func resumeTakeovers(readFailed failure: String?) {
        guard !cluster.takeoversWaiting.isEmpty else { return }
        if failure == nil && cluster.recordsReadThrough < cluster.goneReadNeeded { return }
        let sessions = cluster.takeoversWaiting.sorted()
        cluster.takeoversWaiting = []
        for session in sessions {
            guard failure != nil else {
                resolvePendingConnects(of: session)
                continue
            }
            for pending in pendingConnects.removeValue(forKey: session) ?? [] where connections[pending.connection] != nil {
                connections[pending.connection]?.phase = .awaitingConnect
                fail(pending.requestID, request: "connect", PanesError(
                    .storageFailed, "the session could not be read from the store; retry",
                    retryAfterMs: Int(cluster.readBackoff.currentMs ?? Backoff.sharedStore.minMs)), to: pending.connection)
            }
        }
    }

    // MARK: Opens ahead of this node

    enum OpenWait { case records, operations(Int64) }

    /// Whether an open must wait: the document is not known here yet (made on another node a
    /// moment ago), or the client names a revision newer than this node holds.
    /// - Parameter link: a link token this node does not know may have been made on another
    ///   node: the open waits for the records too.
    func openMustWait(_ id: DocumentID, revision: Int64?, link: String? = nil, scene: Scene) -> OpenWait? {
        guard let record = documents.records[id] else { return .records }
        if let link, rights.link(tokenHash: secretHasher.hash(link)) == nil { return .records }
        guard record.belongs(to: scene.owner.workspace), let revision else { return nil }
        // Not held here: the load reads the store, which has every committed revision.
        guard let open = documents.open[id] else { return nil }
        return revision > open.revision ? .operations(revision) : nil
    }

    /// Answers the opens that waited, once their document's record or operations are here.
    /// - Parameters:
    ///   - finished: a record load just finished (its number): opens of a document still
    ///     unknown after it get the error a single node gives.
    ///   - document: a catch-up of that document just finished: opens still ahead of it get
    ///     their error unless another catch-up is on its way.
    mutating func retryOpens(records finished: Int? = nil, document: DocumentID? = nil) {
        guard !cluster.openWaiters.isEmpty else { return }
        var still: [OpenWaiter] = []
        for waiter in cluster.openWaiters {
            guard let scene = scenes[waiter.scene] else { continue }
            let answer: Bool
            switch openMustWait(waiter.document, revision: waiter.revision, link: waiter.link, scene: scene) {
            case .records?:
                answer = finished.map { waiter.after < $0 } ?? false
            case .operations?:
                answer = document == waiter.document && commits.documentWriters[waiter.document]?.busy != true
                    && cluster.documentsBehind[waiter.document] == nil
            case nil:
                answer = true
            }
            guard answer else {
                still.append(waiter)
                continue
            }
            do throws(PanesError) {
                if let result = try openDocument(waiter.document, revision: waiter.revision, pending: waiter.pending,
                                                 link: waiter.link, requestID: waiter.requestID, scene: scene,
                                                 mayWait: false) {
                    send(.reply(waiter.requestID, result: result), to: scene.connection)
                }
            } catch {
                fail(waiter.requestID, request: "openDocument", error, to: scene.connection)
            }
        }
        cluster.openWaiters = still
    }
}
