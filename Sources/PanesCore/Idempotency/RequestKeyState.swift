/// A reply the hub owes: which connection, which request.
struct ReplyRef: Hashable, Sendable {
    let connection: ConnectionID
    let id: RequestID
}

/// What the hub holds of keyed requests (`idempotencyKey`): the outcomes recorded within the
/// retention window (its own, and those loaded at start), the requests in flight with the
/// retries that wait for them, and the keys being looked up in the store. Every field is
/// private; `Hub+RequestKeys.swift` drives it.
struct RequestKeyState: Sendable {
    /// A request in flight under a key: its first attempt, and the retries waiting for it.
    struct InFlight: Sendable {
        let fingerprint: String
        let origin: ReplyRef
        let type: any Request.Type
        /// Where the hub's effects stood when it was handled (`Hub.turn`, `effects.count`), so
        /// a reply in the same turn finds the request's own persist to record it in.
        let turn: UInt64
        let mark: Int
        /// Its channel commit carries the record (`Idempotency.recordedByCommit`).
        var recordedInCommit = false
        /// Answered `outcome_unknown`: the outcome comes later, and retries wait for it.
        var unresolved = false
        /// Its key is reserved in the shared store for this node (`SharedStore.reserveRequestKeys`),
        /// to be given up if it fails.
        var reserved = false
        var waiters: [Waiter] = []
    }

    struct Waiter: Sendable {
        let request: ClientRequest
        let connection: ConnectionID
        let slot: RequestKeySlot
        /// For a retry of an unresolved request: when it is answered `outcome_unknown` again.
        var deadline: Millis? = nil
    }

    enum Screening {
        /// Answered before: send the recorded outcome.
        case replay(RequestRecord)
        /// The key belongs to another request.
        case reused
        /// The first attempt is in flight here: this one waits for its answer.
        case wait(unresolved: Bool)
        /// Unknown here: looked up in the store first; `first` when no look-up was under way.
        case lookUp(first: Bool)
        /// A new request: handle it.
        case handle
    }

    private var recorded: [RequestKeySlot: RequestRecord] = [:]
    private var inFlight: [RequestKeySlot: InFlight] = [:]
    private var byReply: [ReplyRef: RequestKeySlot] = [:]
    private var lookingUp: [RequestKeySlot: [Waiter]] = [:]
    /// Answers held until the store says whether their key was recorded by another node
    /// (`Hub.confirmFromStore`).
    private var confirming: [RequestKeySlot: ServerMessage] = [:]
    /// Keys reserved for this node in the shared store and not yet handled: their next request
    /// is handled without asking again.
    private var reserved: Set<RequestKeySlot> = []
    /// Recorded keys by when they leave the window, and each owner's in the order recorded
    /// (for `maxIdempotencyKeysPerUser`).
    private var expiries = DeadlineQueue<RequestKeySlot>()
    private var order: [OwnerKey: [(slot: RequestKeySlot, at: Millis)]] = [:]
    private var orderHead: [OwnerKey: Int] = [:]
    private var heldCount: [OwnerKey: Int] = [:]
    /// Retries waiting on an unresolved request, by when they are answered `outcome_unknown`.
    private var waitDeadlines = DeadlineQueue<RequestKeySlot>()
    /// When the store's records are next pruned; nil while nothing was ever recorded.
    private(set) var nextPrune: Millis?
    /// Records to read back to undo left-out writes, whose read failed: read again at `undoAt`.
    private(set) var undo: (sessions: [SessionID], documents: [DocumentID]) = ([], [])
    private(set) var undoAt: Millis?
    /// Records forgotten here and not yet in the store: so a request with one of these keys,
    /// now a new request, is not taken for a retry by the store (`takeForgotten`).
    private var forgotten: [RecordedKey] = []

    var isIdle: Bool { byReply.isEmpty }

    var nextDeadline: Millis? {
        expiries.nextDeadline.earlier(waitDeadlines.nextDeadline).earlier(nextPrune).earlier(undoAt)
    }

    /// A read to undo a left-out write failed: its records are read again at `at`.
    mutating func undoLater(sessions: [SessionID], documents: [DocumentID], at: Millis) {
        undo.sessions += sessions
        undo.documents += documents
        undoAt = min(undoAt ?? at, at)
    }

    /// The records due to be read again, if their time has come.
    mutating func takeUndo(now: Millis) -> (sessions: [SessionID], documents: [DocumentID])? {
        guard let at = undoAt, at <= now else { return nil }
        defer {
            undo = ([], [])
            undoAt = nil
        }
        return undo
    }

    init(records: [RequestRecord], now: Millis, settings: Settings) {
        for record in records.sorted(by: { $0.at < $1.at }) { remember(record, settings: settings, now: now) }
    }

    // MARK: Screening

    mutating func screen(_ slot: RequestKeySlot, fingerprint: String, request: ClientRequest, connection: ConnectionID,
                         lookUpFirst: Bool, now: Millis, settings: Settings) -> Screening {
        if let record = recorded[slot] {
            if record.at + Millis(settings.idempotencyRetentionMs) > now {
                return record.fingerprint == fingerprint ? .replay(record) : .reused
            }
            forget(slot)
        }
        if var entry = inFlight[slot] {
            guard entry.fingerprint == fingerprint else { return .reused }
            var waiter = Waiter(request: request, connection: connection, slot: slot)
            if entry.unresolved {
                let deadline = now + Millis(settings.commitOutcomeTimeoutMs)
                waiter.deadline = deadline
                waitDeadlines.push(slot, at: deadline)
            }
            entry.waiters.append(waiter)
            inFlight[slot] = entry
            return .wait(unresolved: entry.unresolved)
        }
        if lookUpFirst, !reserved.contains(slot) {
            lookingUp[slot, default: []].append(Waiter(request: request, connection: connection, slot: slot))
            return .lookUp(first: lookingUp[slot]!.count == 1)
        }
        return .handle
    }

    mutating func begin(_ slot: RequestKeySlot, fingerprint: String, origin: ReplyRef, type: any Request.Type,
                        turn: UInt64, mark: Int) {
        var entry = InFlight(fingerprint: fingerprint, origin: origin, type: type, turn: turn, mark: mark)
        entry.reserved = reserved.remove(slot) != nil
        inFlight[slot] = entry
        byReply[origin] = slot
    }

    mutating func confirm(_ slot: RequestKeySlot, _ answer: ServerMessage) {
        confirming[slot] = answer
    }

    mutating func confirmed(_ slot: RequestKeySlot) -> ServerMessage? {
        confirming.removeValue(forKey: slot)
    }

    /// A key reserved here whose requests all went before they were handled: given up.
    /// - Returns: whether it was reserved and not taken up.
    mutating func giveUpReservation(_ slot: RequestKeySlot) -> Bool {
        guard inFlight[slot] == nil, lookingUp[slot] == nil else { return false }
        return reserved.remove(slot) != nil
    }

    /// A reservation came back: the requests that waited for it, to be handled again (a key
    /// reserved here is then handled, a recorded one answered from its record), and those to
    /// tell that another node has an attempt in flight.
    mutating func reserved(_ outcomes: [RequestKeySlot: KeyReservationOutcome], settings: Settings,
                           now: Millis) -> (again: [Waiter], elsewhere: [Waiter]) {
        var again: [Waiter] = []
        var elsewhere: [Waiter] = []
        for (slot, outcome) in outcomes {
            guard let waiters = lookingUp.removeValue(forKey: slot) else { continue }
            switch outcome {
            case .reserved:
                reserved.insert(slot)
                again += waiters
            case .recorded(let record):
                remember(record, settings: settings, now: now)
                again += waiters
            case .reservedElsewhere:
                elsewhere += waiters
            }
        }
        return (again, elsewhere)
    }

    /// A failed look-up: its requests, to be answered with the failure.
    mutating func lookUpFailed(_ slots: [RequestKeySlot]) -> [Waiter] {
        slots.flatMap { lookingUp.removeValue(forKey: $0) ?? [] }
    }

    // MARK: Completion

    /// The request in flight that this reply answers, if any.
    func slot(answeredBy reply: ReplyRef) -> RequestKeySlot? {
        byReply[reply]
    }

    /// Keyed `connect`s in flight from this connection: one that has not attached by the time
    /// its connection closes never will.
    func connects(from connection: ConnectionID) -> [ReplyRef] {
        byReply.compactMap { ref, slot in
            ref.connection == connection && inFlight[slot]?.type == ConnectRequest.self ? ref : nil
        }
    }

    /// The `connect`s waiting here: for their key's look-up in the store, or for the first
    /// attempt in flight under their key (`Hub.connectsUnderWay`).
    var waitingConnects: [ReplyRef] {
        guard !lookingUp.isEmpty || !inFlight.isEmpty else { return [] }
        return (lookingUp.values.joined() + inFlight.values.lazy.flatMap(\.waiters))
            .filter { $0.request.request is ConnectRequest }
            .map { ReplyRef(connection: $0.connection, id: $0.request.id) }
    }

    func entry(_ slot: RequestKeySlot) -> InFlight? {
        inFlight[slot]
    }

    /// Its commit records it (set when the commit is made).
    mutating func recordsInCommit(_ slot: RequestKeySlot) {
        inFlight[slot]?.recordedInCommit = true
    }

    /// The request succeeded: its outcome is kept, and its retries are handed back.
    mutating func succeeded(_ slot: RequestKeySlot, record: RequestRecord, settings: Settings, now: Millis) -> [Waiter] {
        guard let entry = inFlight.removeValue(forKey: slot) else { return [] }
        byReply[entry.origin] = nil
        remember(record, settings: settings, now: now)
        return entry.waiters
    }

    /// The request failed, so nothing was applied: its retries get the same answer, and a
    /// later one is a new request.
    mutating func failed(_ slot: RequestKeySlot) -> (waiters: [Waiter], reserved: Bool) {
        guard let entry = inFlight.removeValue(forKey: slot) else { return ([], false) }
        byReply[entry.origin] = nil
        return (entry.waiters, entry.reserved)
    }

    /// A held write of this key was left out by the store: another attempt of the request
    /// was applied. What this node recorded of it is forgotten, and the store's record held.
    mutating func lostToAnotherAttempt(_ slot: RequestKeySlot, found: RequestRecord?, settings: Settings, now: Millis) {
        if recorded.removeValue(forKey: slot) != nil { heldCount[slot.owner, default: 1] -= 1 }
        if let found { remember(found, settings: settings, now: now) }
    }

    /// Answered `outcome_unknown`: it stays in flight until its real outcome comes; the retries
    /// waiting now get the same answer, later ones wait up to `commitOutcomeTimeoutMs`.
    mutating func unresolved(_ slot: RequestKeySlot) -> [Waiter] {
        guard var entry = inFlight[slot] else { return [] }
        entry.unresolved = true
        let waiters = entry.waiters
        entry.waiters = []
        inFlight[slot] = entry
        return waiters
    }

    /// Retries that waited on an unresolved request past the bound.
    mutating func overdueWaiters(now: Millis) -> [Waiter] {
        var overdue: [Waiter] = []
        for (_, slot) in waitDeadlines.popDue(now: now) {
            guard var entry = inFlight[slot], entry.unresolved else { continue }
            overdue += entry.waiters.filter { ($0.deadline ?? .max) <= now }
            entry.waiters.removeAll { ($0.deadline ?? .max) <= now }
            inFlight[slot] = entry
        }
        return overdue
    }

    // MARK: Keeping records

    private mutating func remember(_ record: RequestRecord, settings: Settings, now: Millis) {
        let slot = record.slot
        if recorded.updateValue(record, forKey: slot) == nil { heldCount[slot.owner, default: 0] += 1 }
        order[slot.owner, default: []].append((slot, record.at))
        expiries.push(slot, at: record.at + Millis(settings.idempotencyRetentionMs))
        if nextPrune == nil { nextPrune = now + Millis(settings.walCheckpointIntervalMs) }
        compact(slot.owner, limit: settings.maxIdempotencyKeysPerUser)
    }

    /// Keeps at most `limit` of the owner's records, forgetting the oldest first, and drops
    /// from the front of its order what is no longer held.
    private mutating func compact(_ owner: OwnerKey, limit: Int) {
        guard var list = order[owner] else { return }
        var head = orderHead[owner] ?? 0
        var held = heldCount[owner] ?? 0
        while head < list.count, held > limit || recorded[list[head].slot]?.at != list[head].at {
            let oldest = list[head]
            if recorded[oldest.slot]?.at == oldest.at {
                recorded[oldest.slot] = nil
                forgotten.append(RecordedKey(slot: oldest.slot, at: oldest.at))
                held -= 1
            }
            head += 1
        }
        heldCount[owner] = held > 0 ? held : nil
        if head == list.count {
            order[owner] = nil
            orderHead[owner] = nil
            return
        }
        if head > 64, head * 2 > list.count {
            list.removeFirst(head)
            head = 0
        }
        order[owner] = list
        orderHead[owner] = head
    }

    private mutating func forget(_ slot: RequestKeySlot) {
        guard let record = recorded.removeValue(forKey: slot) else { return }
        forgotten.append(RecordedKey(slot: slot, at: record.at))
        heldCount[slot.owner, default: 1] -= 1
        compact(slot.owner, limit: .max)
    }

    var hasForgotten: Bool { !forgotten.isEmpty }

    /// The keys forgotten since last asked, for the store to forget too.
    mutating func takeForgotten() -> [RecordedKey] {
        defer { forgotten.removeAll() }
        return forgotten
    }

    /// Forgets what left the window.
    /// - Returns: whether the store's records are due a prune now.
    mutating func expire(now: Millis, settings: Settings) -> Bool {
        var owners: Set<OwnerKey> = []
        for (_, slot) in expiries.popDue(now: now) {
            guard let record = recorded[slot], record.at + Millis(settings.idempotencyRetentionMs) <= now else { continue }
            recorded[slot] = nil
            forgotten.append(RecordedKey(slot: slot, at: record.at))
            heldCount[slot.owner, default: 1] -= 1
            owners.insert(slot.owner)
        }
        for owner in owners { compact(owner, limit: settings.maxIdempotencyKeysPerUser) }
        guard let due = nextPrune, due <= now else { return false }
        nextPrune = recorded.isEmpty ? nil : now + Millis(settings.walCheckpointIntervalMs)
        return true
    }
}
