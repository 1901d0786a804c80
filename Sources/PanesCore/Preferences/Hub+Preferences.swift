import Logging

/// Key-value observation over the wire: observe a key or a subtree, set and remove values
/// (optionally compare-and-set), and tell every observing scene of every change, once, in
/// version order.
///
/// Writes go through the domain's channel (`CommitState`): checked against the committed
/// values plus the earlier writes of the same batch, committed together, and applied, answered
/// and announced only once the store has committed them.
extension Hub {
    /// A scene's own user domain, or its workspace's domain.
    func preferenceDomain(_ kind: DomainKind, for scene: Scene) -> PreferenceDomain {
        PreferenceDomain(workspace: scene.owner.workspace, user: kind == .user ? scene.owner.user : nil)
    }

    mutating func observe(_ kind: DomainKind, _ keyPath: KeyPath, _ options: ObservationOptions,
                          scene: Scene) throws(PanesError) -> JSONValue {
        let count = preferences.observationCount(of: scene.id)
        guard count < settings.maxObservationsPerScene else {
            throw PanesError(.tooMany, "this scene already has \(count) observations (setting `maxObservationsPerScene`)")
        }
        let domain = preferenceDomain(kind, for: scene)
        let observation = preferences.observe(domain, kind, keyPath, options, by: scene.id)

        if options.contains(.initial) {
            let keys = preferences.keys(domain, kind, under: keyPath)
            for key in keys {
                let current = preferences.effective(domain, kind, key)!
                send(.event(ServerEvent("preferenceChanged", JSONValue.object([
                    "domain": .string(kind.rawValue), "keyPath": .string(key.string), "version": .int(current.version),
                    "observations": [.int(Int64(observation.id))], "new": current.value, "initial": true,
                    "isDefault": current.source == .default ? true : nil,
                    "locked": current.source == .locked ? true : nil,
                ]).objectValue!)), to: scene.connection)
            }
            if keys.isEmpty {
                send(.event(ServerEvent("preferenceChanged", [
                    "domain": .string(kind.rawValue), "keyPath": .string(keyPath.string), "version": 0,
                    "observations": [.int(Int64(observation.id))], "initial": true, "exists": false,
                ])), to: scene.connection)
            }
        }
        return ["observation": .int(Int64(observation.id))]
    }

    mutating func unobserve(_ id: Int, scene sceneID: SceneID) throws(PanesError) {
        guard preferences.unobserve(id, by: sceneID) != nil else {
            throw PanesError(.observationNotFound, "this scene has no observation \(id)", field: "observation")
        }
    }

    // MARK: Writes

    /// Checks what needs no state, then queues the write on its domain's channel. The reply
    /// comes when the write's commit does (nil here).
    mutating func requestPreferenceChange(_ kind: DomainKind, _ key: KeyPath, to value: JSONValue?, ifVersion: Int64?,
                                          _ context: RequestContext) throws(PanesError) -> JSONValue? {
        let scene = self.scene(context.scene)
        if kind == .workspace, scene.role < settings.workspacePreferenceWriters {
            throw PanesError(.forbidden, "writing workspace preferences needs the role `\(settings.workspacePreferenceWriters.rawValue)` (setting `workspacePreferenceWriters`); you are `\(scene.role.rawValue)`")
        }
        if let managed = preferences.managed.value(kind, key), managed.locked {
            throw PanesError(.preferenceLocked, "`\(key)` is locked by the server's managed preferences; it cannot be changed",
                             field: "keyPath")
        }
        if let value, let registration = preferences.defaults.registration(kind, key), !registration.type.admits(value) {
            throw PanesError(.typeMismatch, "`\(key)` takes \(registration.type.rawValue) values (its registered default's type), not \(value.typeName)",
                             field: "value")
        }
        let domain = preferenceDomain(kind, for: scene)
        enqueue(PreferenceChannel.self, PreferenceWrite(context: context, kind: kind, key: key, value: value,
                                                        ifVersion: ifVersion), on: domain)
        return nil
    }

    /// If the domain has no commit in flight, checks every waiting write in order against the
    /// committed values and the batch's earlier writes, and commits the changes as one.
    mutating func startPreferenceBatch(_ domain: PreferenceDomain) {
        guard let taken = takeBatch(PreferenceChannel.self, domain) else { return }
        var writer = taken.writer
        let writes = taken.items
        let rechecked = writer.rechecked
        writer.rechecked = false
        let state = preferences.domain(domain) ?? PreferenceDomainState()
        var batch = PreferenceBatch(state: state)
        var commands: [StoreCommand] = []
        var outcomes: [PreferenceOutcome] = []
        for write in writes {
            do throws(PanesError) {
                let outcome = try check(write, in: domain, batch: batch)
                if case .changed(let version, _) = outcome {
                    batch.apply(write.key.string, write.value, version: version)
                    if let value = write.value {
                        commands.append(.putPreference(domain, keyPath: write.key.string, value: value, version: version))
                    } else {
                        commands.append(.removePreference(domain, keyPath: write.key.string, version: version))
                    }
                    commands += preferenceWebhook(domain, key: write.key.string, value: write.value, version: version,
                                                  by: write.context)
                    // Its key's record goes in the same commit: a retry through any node finds it.
                    if let record = commitRecord(write.context, result: ["version": .int(version), "changed": true]) {
                        commands.append(record)
                    }
                }
                outcomes.append(outcome)
            } catch {
                outcomes.append(.failed(error))
            }
        }
        if sharesStore, !rechecked, outcomes.contains(where: { if case .failed(let error) = $0 { error.code == .versionConflict } else { false } }) {
            // This node's copy of the domain may be behind the store (it missed changes while
            // the database or its notices were away): a compare-and-set is refused only once the
            // domain is caught up, and the writes are checked again on what it reads.
            writer.waiting = writes
            writer.rechecked = true
            commits.preferenceWriters[domain] = writer
            catchUp(PreferenceChannel.self, domain, afterConflict: false)
            return
        }
        if commands.isEmpty {
            dropBatch(PreferenceChannel.self, domain)
            answer(writes, outcomes, in: domain, applying: false)
            return
        }
        commitBatch(PreferenceChannel.self, domain, writer: writer, channel: .preferences(domain), base: state.version,
                    commands: commands, pending: .preferences(domain, writes, outcomes))
    }

    /// Whether one write of a batch is allowed, and what it does.
    func check(_ write: PreferenceWrite, in domain: PreferenceDomain, batch: PreferenceBatch) throws(PanesError) -> PreferenceOutcome {
        let key = write.key
        if let conflict = batch.nesting(key) ?? registeredNesting(key, write.kind).map({ "`\($0)`" }) {
            throw PanesError(.keyPathConflict, "`\(key)` nests with \(conflict), which already has a value; a key cannot lie inside, or above, another",
                             field: "keyPath")
        }
        let stored = batch.value(key.string)
        if let ifVersion = write.ifVersion, ifVersion != (stored?.version ?? 0) {
            throw PanesError(.versionConflict, "`\(key)` is at version \(stored?.version ?? 0), not \(ifVersion)", field: "ifVersion")
        }
        let before = preferences.effective(domain, write.kind, key, stored: stored)
        let unchanged = write.value.map { new in before.map { $0.value.sameValue(as: new) } ?? false } ?? (stored == nil)
        if unchanged { return .unchanged(version: before?.version ?? 0) }
        if let value = write.value {
            if stored == nil, batch.count >= settings.maxPreferenceKeys {
                throw PanesError(.tooMany, "the \(domain.kind) domain already holds \(batch.count) keys (setting `maxPreferenceKeys`); remove some",
                                 field: "keyPath")
            }
            let grown = batch.bytes - (stored.map { PreferenceDomainState.size(of: key.string, $0.value) } ?? 0)
                + PreferenceDomainState.size(of: key.string, value)
            if grown > settings.maxPreferenceBytes {
                throw PanesError(.tooLarge, "the \(domain.kind) domain would hold \(grown) bytes, over the limit of \(settings.maxPreferenceBytes) (setting `maxPreferenceBytes`)",
                                 field: "value")
            }
        }
        return .changed(version: batch.version + 1, old: before?.value)
    }

    /// A registered default or managed key that nests with `key`: such keys cannot both exist.
    func registeredNesting(_ key: KeyPath, _ kind: DomainKind) -> KeyPath? {
        preferences.defaults.registrations[kind]?.keys.first { $0.nests(with: key) }
            ?? preferences.managed.keys(kind).first { $0.nests(with: key) }
    }

    /// The outcome of a preference commit: applies and answers, or requeues after a conflict.
    mutating func preferencesCommitted(_ domain: PreferenceDomain, _ writes: [PreferenceWrite],
                                       _ outcomes: [PreferenceOutcome], _ outcome: CommitOutcome) {
        commits.preferenceWriters.commitEnded(domain)
        switch outcome {
        case .committed:
            answer(writes, outcomes, in: domain, applying: true)
        case .conflict, .behind:
            // Another node wrote first: read what it wrote, then check these again on top of it.
            retryAfterConflict(PreferenceChannel.self, writes, on: domain)
            return
        case .failed(let reason):
            logLimited(.error, "preference commit failed", metadata: ["domain": "\(domain)", "reason": "\(reason)"])
            let error = PanesError(.storageFailed, "the change could not be stored; nothing was changed, retry",
                                   retryAfterMs: 1_000)
            answer(writes, zip(writes, outcomes).map { write, outcome in
                if case .failed = outcome { outcome } else { .failed(storeFailure(error, for: write.context)) }
            }, in: domain, applying: false)
        case .recorded(let records):
            // Some of these writes were applied through another node already (a retry of a
            // request whose reply was lost): they are answered from their records, and the
            // others go again.
            let found = Dictionary(records.map { ($0.slot, $0) }, uniquingKeysWith: { first, _ in first })
            var again: [PreferenceWrite] = []
            for write in writes {
                if let slot = write.context.key, let record = found[slot] {
                    answerFromStore(write.context, request: write.type, record)
                } else {
                    again.append(write)
                }
            }
            commits.preferenceWriters.requeue(again, on: domain)
            // What that node wrote to the domain is read before the rest go again.
            catchUp(PreferenceChannel.self, domain, afterConflict: false)
            return
        case .unknown:
            // Answered early (`commitOutcomeUnknown`); the real outcome comes later.
            return
        }
        nextBatch(PreferenceChannel.self, domain)
    }

    /// Replies to each write in order; with `applying`, first applies each change and tells
    /// its observers.
    mutating func answer(_ writes: [PreferenceWrite], _ outcomes: [PreferenceOutcome], in domain: PreferenceDomain,
                         applying: Bool) {
        for (write, outcome) in zip(writes, outcomes) {
            switch outcome {
            case .failed(let error):
                if error.code != .outcomeUnknown, mustConfirm(write.context) {
                    confirmFromStore(write.context, .failure(write.context.id, request: write.type, error))
                    continue
                }
                fail(write.context.id, request: write.type, error, to: write.context.connection)
            case .unchanged(let version):
                let reply = ServerMessage.reply(write.context.id, result: ["version": .int(version), "changed": false])
                if mustConfirm(write.context) {
                    confirmFromStore(write.context, reply)
                    continue
                }
                send(reply, to: write.context.connection)
            case .changed(let version, let old):
                guard applying else { continue }
                preferences.apply(write.key.string, write.value, version: version, in: domain)
                send(.reply(write.context.id, result: ["version": .int(version), "changed": true]),
                     to: write.context.connection)
                notifyObservers(of: write.key, in: domain, kind: write.kind, version: version, old: old)
            }
        }
    }

    /// A domain as the store has it now (after a conflict): applies every difference to the
    /// domain held here, in version order, telling observers, then lets the waiting writes go.
    mutating func preferencesLoaded(_ domain: PreferenceDomain, _ stored: StoredPreferences?, failure: String?) {
        let afterConflict = endCatchUp(PreferenceChannel.self, domain)
        if let failure {
            logLimited(.error, "preference catch-up failed", metadata: ["domain": "\(domain)", "error": "\(failure)"])
            preferenceReadFailed(domain)
            let error = PanesError(.storageFailed, "the preferences could not be read from the store; retry", retryAfterMs: 1_000)
            let writes = commits.preferenceWriters.takeWaiting(domain)
            answer(writes, writes.map { .failed(storeFailure(error, for: $0.context)) }, in: domain, applying: false)
            return
        }
        let stored = stored ?? StoredPreferences()
        guard stored.version > preferences.version(of: domain) || !afterConflict else {
            // A conflict with nothing newer in the store: retrying would only conflict again.
            logger.critical("preference commit conflicted but the store holds nothing newer",
                            metadata: ["domain": "\(domain)", "stored": "\(stored.version)"])
            failStuck(PreferenceChannel.self, domain)
            return
        }
        applyStored(stored, to: domain)
        nextBatch(PreferenceChannel.self, domain)
    }

    /// Brings the domain held here to `stored`, announcing each changed key in version order.
    mutating func applyStored(_ stored: StoredPreferences, to domain: PreferenceDomain) {
        let held = preferences.domain(domain) ?? PreferenceDomainState()
        guard stored.version > held.version else { return }
        var changes: [(key: String, value: JSONValue?, version: Int64)] = []
        for (key, value) in stored.values where held.values[key] != value {
            changes.append((key, value.value, value.version))
        }
        for key in held.values.keys where stored.values[key] == nil {
            changes.append((key, nil, stored.version))
        }
        let kind: DomainKind = domain.user == nil ? .workspace : .user
        for change in changes.sorted(by: { ($0.version, $0.key) < ($1.version, $1.key) }) {
            guard let key = try? KeyPath(change.key) else { continue }
            let old = preferences.effective(domain, kind, key)?.value
            preferences.apply(change.key, change.value, version: change.version, in: domain)
            notifyObservers(of: key, in: domain, kind: kind, version: change.version, old: old)
        }
        preferences.apply(version: stored.version, in: domain)
    }

    /// One `preferenceChanged` per observing scene, listing that scene's matching observations.
    /// Scenes whose notification is identical share one encoded message (`ObserverClasses`).
    mutating func notifyObservers(of key: KeyPath, in domain: PreferenceDomain, kind: DomainKind, version: Int64,
                                  old: JSONValue?) {
        guard preferences.isObserved(domain) else { return }
        let scenes = self.scenes.byIDTable
        let classes = preferences.observerClasses(of: domain) { scenes[$0]?.connection }
        let now = preferences.effective(domain, kind, key)
        let removed = preferences.domain(domain)?.values[key.string] == nil
        for (shape, connections) in classes.notifications(of: key) {
            let event = ServerEvent("preferenceChanged", JSONValue.object([
                "domain": .string(kind.rawValue), "keyPath": .string(key.string), "version": .int(version),
                "observations": .array(shape.ids.map { .int(Int64($0)) }),
                "new": shape.wantsNew ? now?.value : nil,
                "old": shape.wantsOld ? (old ?? .null) : nil,
                "removed": removed ? true : nil,
                "isDefault": now?.source == .default ? true : nil,
                "locked": now?.source == .locked ? true : nil,
            ]).objectValue!)
            broadcast(.event(event), to: connections)
        }
    }

    mutating func preferencesSceneWillEnd(_ scene: Scene) {
        preferences.sceneEnded(scene.id)
    }
}

/// A domain's committed values seen through the pending writes of one batch, so each write is
/// checked as if the earlier ones had been applied, without copying the domain.
struct PreferenceBatch {
    let state: PreferenceDomainState
    /// Keys written by the batch so far: their value after it (nil when removed).
    private var written: [String: VersionedValue?] = [:]
    /// Change in the number of stored keys below each prefix, from the batch's writes.
    private var belowDelta: [String: Int] = [:]
    private(set) var version: Int64
    private(set) var count: Int
    private(set) var bytes: Int

    init(state: PreferenceDomainState) {
        self.state = state
        version = state.version
        count = state.count
        bytes = state.bytes
    }

    func value(_ key: String) -> VersionedValue? {
        if let written = written[key] { return written }
        return state.values[key]
    }

    /// A held key that nests with `key`, described for an error: one of its prefixes, or
    /// "a key below it" (which one is not worth a scan of the domain).
    func nesting(_ key: KeyPath) -> String? {
        for prefix in PreferenceDomainState.prefixes(of: key.string) where value(prefix) != nil {
            return "`\(prefix)`"
        }
        if (state.below[key.string] ?? 0) + (belowDelta[key.string] ?? 0) > 0 { return "a key below it" }
        return nil
    }

    mutating func apply(_ key: String, _ value: JSONValue?, version: Int64) {
        let before = self.value(key)
        if let before { bytes -= PreferenceDomainState.size(of: key, before.value) }
        if let value { bytes += PreferenceDomainState.size(of: key, value) }
        let delta = (value == nil ? 0 : 1) - (before == nil ? 0 : 1)
        if delta != 0 {
            count += delta
            for prefix in PreferenceDomainState.prefixes(of: key) { belowDelta[prefix, default: 0] += delta }
        }
        written[key] = .some(value.map { VersionedValue(value: $0, version: version) })
        self.version = version
    }
}
