import Logging

/// Request keys (`idempotencyKey`): a state-changing request sent again with the same key is
/// answered with the first attempt's outcome instead of being applied again.
///
/// - A keyed request's successful outcome is recorded in the store in the same transaction as
///   its change (in the request's own persist, or in its channel commit), and held here for
///   `idempotencyRetentionMs`, at most `maxIdempotencyKeysPerUser` per user. So a record never
///   reports a change that did not commit, and no committed change lacks its record. One
///   exception: a cluster drop onto another window or the new-window zone, answered only once
///   delivered after its commit, is recorded in a persist after it (`Hub+ClusterDrags.swift`).
/// - A retry that arrives while the first attempt is in flight here waits for it and gets the
///   same answer, error included. After an error nothing was applied, so a later retry is
///   handled as a new request.
/// - In a cluster, a key this node does not hold may have been answered by another node, or
///   have an attempt in flight there. The key is reserved for this node in the shared store
///   before the request is handled (`Idempotency.recorded`): found recorded, the request is
///   answered from the record; reserved by another live node, it is answered `outcome_unknown`
///   (the other attempt's outcome is not known here). Once reserved, the store writes no other
///   node's attempt of it: an older attempt held on a node cut off from the database is left
///   out when it comes, and that node undoes in memory what it had applied
///   (`keyedWriteCommitted`). A preference write needs no reservation: its commit is refused by
///   the store when the key is recorded (`Idempotency.recordedByCommit`), and a failure of it
///   is `outcome_unknown`, since another node may hold an attempt of it.
/// - A request answered `outcome_unknown` stays in flight until the store knows what became of
///   its commit; retries wait for that, each up to `commitOutcomeTimeoutMs`.
extension Hub {
    /// Screens a keyed request before it is handled: answers a retry, refuses a reused key, or
    /// puts it to wait.
    /// - Returns: the key's slot when the request is to be handled now (it is in flight from
    ///   now on); nil when it was taken care of here.
    mutating func screenKeyed(_ request: ClientRequest, owner: OwnerKey, on connection: ConnectionID)
        -> (handle: Bool, slot: RequestKeySlot?) {
        guard let key = request.key, let fingerprint = request.fingerprint else { return (true, nil) }
        let type = Swift.type(of: request.request)
        let slot = RequestKeySlot(owner: owner, key: key)
        let screening = requestKeys.screen(slot, fingerprint: fingerprint, request: request, connection: connection,
                                           lookUpFirst: sharesStore && type.idempotency == .recorded, now: now(),
                                           settings: settings)
        switch screening {
        case .handle:
            requestKeys.begin(slot, fingerprint: fingerprint, origin: ReplyRef(connection: connection, id: request.id),
                              type: type, turn: turn, mark: effects.count)
            return (true, slot)
        case .replay(let record):
            metrics.requestsReplayed += 1
            replay(request, record, on: connection)
        case .reused:
            fail(request.id, request: request.type, PanesError(
                .idempotencyKeyReused, "this `idempotencyKey` was used for another request; use a new key for a new request",
                field: "idempotencyKey"), to: connection)
        case .wait:
            holdConnect(request, on: connection)
        case .lookUp(let first):
            holdConnect(request, on: connection)
            if first { reserveKey(slot, fingerprint: fingerprint) }
        }
        return (false, nil)
    }

    /// A `connect` that waits (for its first attempt, or a look-up) holds the requests sent
    /// behind it, as any connect that waits does.
    private mutating func holdConnect(_ request: ClientRequest, on connection: ConnectionID) {
        guard request.request.asConnect != nil, case .awaitingConnect? = connections[connection]?.phase else { return }
        connections.setPhase(.answering(SessionID("")), of: connection)
    }

    /// Answers a retry with what its first attempt was answered. A `connect` is made again on
    /// the session the first one attached (with a new secret: only its hash is kept).
    mutating func replay(_ request: ClientRequest, _ record: RequestRecord, on connection: ConnectionID) {
        logger.debug("request answered from its key", metadata: ["connection": "\(connection)", "request": "\(request.type)"])
        guard var connect = request.request.asConnect else {
            let type = Swift.type(of: request.request)
            send(.reply(request.id, result: type.replayedResult(record.result, record.slot, self)), to: connection)
            return
        }
        do throws(PanesError) {
            guard let replay = ConnectRequest.Replay(record.result) else {
                throw PanesError(.internalError, "the recorded connect cannot be read", retryAfterMs: 1_000)
            }
            connect.replay = replay
            try self.connect(connect, requestID: request.id, on: connection)
        } catch {
            fail(request.id, request: request.type, error, to: connection)
        }
    }

    /// A reply is about to leave: if it answers a keyed request in flight, its outcome is
    /// recorded (with the request's change) and its waiting retries are answered the same.
    /// - Returns: whether the reply must not be sent (its request was answered already).
    mutating func replyLeaving(_ message: ServerMessage, to connection: ConnectionID) -> Bool {
        guard let id = message.replyTo else { return false }
        let ref = ReplyRef(connection: connection, id: id)
        let suppressed = commits.answered.remove(ref) != nil
        defer { commits.outcomeLater.remove(ref) }
        if let slot = requestKeys.slot(answeredBy: ref), let entry = requestKeys.entry(slot) {
            switch message {
            case .reply, .connected:
                let result = message.result ?? .null
                let record = RequestRecord(slot: slot, fingerprint: entry.fingerprint,
                                           result: entry.type.recordedResult(result), at: now())
                if !entry.recordedInCommit { recordDurably(record, entry) }
                redispatch(requestKeys.succeeded(slot, record: record, settings: settings, now: now()))
            case .failure(_, let request, let error):
                var waiters: [RequestKeyState.Waiter]
                if error.code == .outcomeUnknown, commits.outcomeLater.remove(ref) != nil {
                    // Its commit's real outcome comes later: it stays in flight until then.
                    waiters = requestKeys.unresolved(slot)
                } else {
                    let failed = requestKeys.failed(slot)
                    waiters = failed.waiters
                    // Nothing was applied: the key is free again, for a retry through any node.
                    if failed.reserved { releaseKey(slot) }
                }
                for waiter in waiters { answerWaiter(waiter, request: request, error) }
            case .event:
                break
            }
        }
        return suppressed
    }

    /// Puts the record in the request's own last persist when it made one in this turn (one
    /// transaction for both); otherwise in a persist of its own, ahead of the reply.
    /// In a cluster the record is written over this node's reservation, and the store reports
    /// whether the persist went in (`keyedWriteCommitted`).
    private mutating func recordDurably(_ record: RequestRecord, _ entry: RequestKeyState.InFlight) {
        var index: Int?
        if entry.turn == turn, entry.mark <= effects.count {
            index = effects[entry.mark...].lastIndex { if case .persist = $0 { true } else { false } }
        }
        var commands: [StoreCommand] = []
        if let index, case .persist(let made) = effects[index] { commands = made }
        commands.append(recordCommand(record, reporting: commands))
        if let index { effects[index] = .persist(commands) } else { effects.append(.persist(commands)) }
    }

    private mutating func answerWaiter(_ waiter: RequestKeyState.Waiter, request: String?, _ error: PanesError) {
        // Gone, or told to close: nothing more is sent to it.
        guard connections.isOpen(waiter.connection) else { return }
        if waiter.request.request is ConnectRequest, case .answering? = connections[waiter.connection]?.phase {
            connections.setPhase(.awaitingConnect, of: waiter.connection)
        }
        fail(waiter.request.id, request: request ?? waiter.request.type, error, to: waiter.connection)
    }

    /// Requests to handle again at the end of this event (a retry whose first attempt has just
    /// been answered, a request whose key was looked up): not in the middle of what answered it.
    private mutating func redispatch(_ waiters: [RequestKeyState.Waiter]) {
        redispatching += waiters
    }

    /// Handles the requests `redispatch` set aside. A key reserved for requests whose
    /// connections are all gone meanwhile is given up, so a retry through another node can go on.
    mutating func handleRedispatched() {
        while !redispatching.isEmpty {
            let waiting = redispatching
            redispatching = []
            var gone: [RequestKeySlot] = []
            for waiter in waiting {
                let (request, connection) = (waiter.request, waiter.connection)
                guard connections.isOpen(connection) else {
                    gone.append(waiter.slot)
                    continue
                }
                if request.request is ConnectRequest, case .answering? = connections[connection]?.phase {
                    connections.setPhase(.awaitingConnect, of: connection)
                }
                dispatch(request, on: connection)
            }
            for slot in gone where requestKeys.giveUpReservation(slot) {
                releaseKey(slot)
            }
        }
    }

    /// A reservation of keys in the shared store came back.
    mutating func requestKeysReserved(_ keys: [KeyReservation], _ outcomes: [RequestKeySlot: KeyReservationOutcome],
                                      failure: String?) {
        if let failure {
            // Whether an earlier attempt of the request (through another node) was applied
            // cannot be told: not "nothing was applied".
            logger.error("request keys could not be reserved", metadata: ["error": "\(failure)"])
            let error = Self.outcomeUnknown("the request key could not be looked up in the store")
            for waiter in requestKeys.lookUpFailed(keys.map(\.slot)) { answerWaiter(waiter, request: nil, error) }
            return
        }
        let sorted = requestKeys.reserved(outcomes, settings: settings, now: now())
        redispatch(sorted.again)
        let error = Self.outcomeUnknown("an earlier attempt of this request is in flight on another node")
        for waiter in sorted.elsewhere { answerWaiter(waiter, request: nil, error) }
    }

    /// The store's word on a keyed persist of this node (`recordKeyedRequest`): in, or left out
    /// because another attempt of the request was applied (or holds the key) first. Left out,
    /// what this node applied of it in memory is undone by reading those records back.
    mutating func keyedWriteCommitted(_ slot: RequestKeySlot, _ commands: [StoreCommand], _ outcome: CommitOutcome) {
        guard case .recorded(let found) = outcome else { return }
        logger.warning("a held write was left out: another attempt of its request was applied first; undoing it here",
                       metadata: ["key": "\(slot)"])
        requestKeys.lostToAnotherAttempt(slot, found: found.first, settings: settings, now: now())
        var sessionIDs: [SessionID] = [], documentIDs: [DocumentID] = []
        for command in commands {
            switch command {
            case .putSession(let session): sessionIDs.append(session.id)
            case .putSessionLiveness(let liveness): sessionIDs.append(liveness.id)
            case .deleteSession(let id), .coordination(.claimSession(let id, _)): sessionIDs.append(id)
            case .createDocument(let record, _): documentIDs.append(record.id)
            case .renameDocument(let id, _), .deleteDocument(let id): documentIDs.append(id)
            default: break
            }
        }
        guard !sessionIDs.isEmpty || !documentIDs.isEmpty else { return }
        effects.append(.load(.records(sessions: sessionIDs, documents: documentIDs)))
    }

    /// Records read back after a write was left out: what the store holds replaces what this
    /// node made of them, and what it does not hold is forgotten.
    mutating func recordsRead(_ read: RecordsRead?, asked: (sessions: [SessionID], documents: [DocumentID]),
                              failure: String?) {
        guard let read else {
            // Read again after the cluster's read backoff: the store is likely away.
            let delay = readFailed()
            logLimited(.error, "records to undo a left-out write could not be read; reading them again",
                       metadata: ["error": "\(failure ?? "?")", "retryInMs": "\(delay)"])
            requestKeys.undoLater(sessions: asked.sessions, documents: asked.documents, at: now() + delay)
            return
        }
        var owners: Set<OwnerKey> = []
        for id in read.missingSessions where sessions[id] != nil {
            forgetRevisions(of: id)
            discard(id, animation: .standard, reason: "its write was left out for another attempt", persisted: true)
        }
        for (id, session) in read.sessions.sorted(by: { $0.key < $1.key }) {
            // This node's copy counts for nothing: the store's is the truth.
            forgetRevisions(of: id)
            guard let taken = take(session) else { continue }
            owners.insert(taken.owner)
        }
        for id in read.missingDocuments { forgetRemotelyDeleted(id) }
        for (_, record) in read.documents.sorted(by: { $0.key < $1.key }) { takeRemoteRecord(record) }
        for owner in owners.sorted(by: { $0.description < $1.description }) { sessionsChanged(for: owner) }
    }

    /// Retries that waited on an unresolved request past `commitOutcomeTimeoutMs`, and records
    /// that left the window; the store's records are pruned every `walCheckpointIntervalMs`.
    mutating func expireRequestKeys(now: Millis) {
        if let undo = requestKeys.takeUndo(now: now) {
            effects.append(.load(.records(sessions: undo.sessions, documents: undo.documents)))
        }
        for waiter in requestKeys.overdueWaiters(now: now) {
            answerWaiter(waiter, request: nil, Self.outcomeUnknown("still unknown"))
        }
        if requestKeys.expire(now: now, settings: settings) {
            effects.append(.persistQuietly([.pruneRequestRecords(
                before: now - Millis(settings.idempotencyRetentionMs), keepPerUser: settings.maxIdempotencyKeysPerUser)]))
        }
    }

    /// What a cluster node forgot (`idempotencyRetentionMs`, `maxIdempotencyKeysPerUser`) is
    /// forgotten in the store too, ahead of any later write with the same key, which is then a
    /// new request there as here: once per event, for all it forgot. (A single node's records
    /// are replaced when their key is used again: see `StoreCommand.recordRequest`.)
    mutating func forgetInStore() {
        let forgotten = requestKeys.takeForgotten()
        guard sharesStore, !forgotten.isEmpty else { return }
        effects.append(.persistQuietly([.forgetRequestRecords(forgotten)]))
    }

    /// What a write the store could not take is told. `storage_failed` says nothing was
    /// applied; in a cluster a keyed write without a reservation (a preference write) cannot
    /// say so of its request: an earlier attempt of it through another node may still commit
    /// (its outcome unknown there). So it is told `outcome_unknown`, and its retry with the key
    /// finds out.
    func storeFailure(_ error: PanesError, for context: RequestContext) -> PanesError {
        guard sharesStore, context.key != nil else { return error }
        return Self.outcomeUnknown("the store could not take it now, and an earlier attempt of it may have been "
                                       + "through another node")
    }

    /// The answer to a write whose commit's outcome is not known yet.
    static func outcomeUnknown(_ reason: String) -> PanesError {
        PanesError(.outcomeUnknown, "the store lost its connection around the commit and cannot tell yet whether the "
                       + "change was applied (\(reason)); send the request again with the same `idempotencyKey` to learn "
                       + "what happened: it is applied at most once", retryAfterMs: 1_000)
    }
}

extension Hub {
    /// A keyed request that will never be answered, having applied nothing (its connection went
    /// before its connect could attach, say): the retries waiting for it are handled as new.
    mutating func abandonKeyed(_ ref: ReplyRef) {
        commits.answered.remove(ref)
        guard let slot = requestKeys.slot(answeredBy: ref) else { return }
        let failed = requestKeys.failed(slot)
        if failed.reserved { releaseKey(slot) }
        redispatch(failed.waiters)
    }

    /// The record a keyed write's commit carries (`Idempotency.recordedByCommit`), its result
    /// known before the commit: nil for a write without a key in flight.
    mutating func commitRecord(_ context: RequestContext, result: JSONValue) -> StoreCommand? {
        // In a cluster the commit checks the key itself: another node may have recorded it.
        keyRecordInCommit(context, result: result).map { recordCommand($0, reporting: nil) }
    }

    /// The record of a keyed write in flight whose answer goes into a commit (this node's, or
    /// another node's: `Hub+RemoteDrops.swift`), so its reply writes none of its own: nil for a
    /// write without a key in flight.
    mutating func keyRecordInCommit(_ context: RequestContext, result: JSONValue) -> RequestRecord? {
        guard let slot = context.key, let entry = requestKeys.entry(slot),
              entry.origin == ReplyRef(connection: context.connection, id: context.id) else { return nil }
        requestKeys.recordsInCommit(slot)
        return RequestRecord(slot: slot, fingerprint: entry.fingerprint, result: entry.type.recordedResult(result),
                             at: now())
    }

    /// Whether an answer to a keyed write that did not go through a commit (refused by its
    /// checks, or changing nothing) must first be checked against the store: in a cluster
    /// another node may have applied an earlier attempt of it, which is then its answer (a
    /// compare-and-set retried after its first attempt landed would otherwise be told
    /// `version_conflict`, a set `changed: false`).
    func mustConfirm(_ context: RequestContext) -> Bool {
        guard sharesStore, let slot = context.key, let entry = requestKeys.entry(slot),
              entry.origin == ReplyRef(connection: context.connection, id: context.id) else { return false }
        return entry.type.idempotency == .recordedByCommit
    }

    /// Holds an answer until the store says whether the key was recorded (`requestRecordsRead`).
    mutating func confirmFromStore(_ context: RequestContext, _ answer: ServerMessage) {
        guard let slot = context.key else { return }
        requestKeys.confirm(slot, answer)
        effects.append(.load(.requestRecords([slot])))
    }

    /// The store's records of keys whose answers were held: a record answers its request; none
    /// lets the held answer go.
    mutating func requestRecordsRead(_ slots: [RequestKeySlot], _ records: [RequestRecord], failure: String?) {
        let found = Dictionary(records.map { ($0.slot, $0) }, uniquingKeysWith: { first, _ in first })
        for slot in slots {
            guard let answer = requestKeys.confirmed(slot), let id = answer.replyTo,
                  let entry = requestKeys.entry(slot) else { continue }
            let connection = entry.origin.connection
            if let record = found[slot] {
                requestKeys.recordsInCommit(slot)  // recorded already: nothing to write
                guard record.fingerprint == entry.fingerprint else {
                    fail(id, request: entry.type.type, PanesError(
                        .idempotencyKeyReused, "this `idempotencyKey` was used for another request; use a new key for a new "
                            + "request", field: "idempotencyKey"), to: connection)
                    continue
                }
                metrics.requestsReplayed += 1
                send(.reply(id, result: record.result), to: connection)
            } else if failure != nil {
                fail(id, request: entry.type.type, Self.outcomeUnknown("whether an earlier attempt of it was applied could "
                                                                        + "not be read from the store"), to: connection)
            } else {
                send(answer, to: connection)
            }
        }
    }

    /// A commit refused because a key it records was recorded first elsewhere: the request is
    /// answered with what that record says, or refused if the key was for another request.
    mutating func answerFromStore(_ context: RequestContext, request: String, _ record: RequestRecord) {
        guard let slot = context.key, let entry = requestKeys.entry(slot), entry.fingerprint == record.fingerprint else {
            fail(context.id, request: request, PanesError(
                .idempotencyKeyReused, "this `idempotencyKey` was used for another request; use a new key for a new request",
                field: "idempotencyKey"), to: context.connection)
            return
        }
        metrics.requestsReplayed += 1
        send(.reply(context.id, result: record.result), to: context.connection)
    }
}
