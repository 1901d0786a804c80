/// Key-value observation over the wire: observe a key or a subtree, set and remove values
/// (optionally compare-and-set), and tell every observing scene of every change, once, in
/// version order.
extension Hub {
    mutating func handle(_ request: PreferenceRequest, from sceneID: SceneID) throws(PanesError) -> JSONValue? {
        let scene = self.scene(sceneID)
        switch request {
        case .observe(let kind, let keyPath, let options):
            return try observe(kind, keyPath, options, scene: scene)
        case .unobserve(let id):
            guard let index = preferences.observations[sceneID]?.list.firstIndex(where: { $0.id == id }) else {
                throw PanesError(.observationNotFound, "this scene has no observation \(id)", field: "observation")
            }
            let removed = preferences.observations[sceneID]!.list.remove(at: index)
            if !preferences.observations[sceneID]!.list.contains(where: { $0.domain == removed.domain }) {
                preferences.observers[removed.domain]?.remove(sceneID)
            }
            return [:]
        case .set(let kind, let keyPath, let value, let ifVersion):
            return try change(kind, keyPath, to: value, ifVersion: ifVersion, scene: scene)
        case .remove(let kind, let keyPath, let ifVersion):
            return try change(kind, keyPath, to: nil, ifVersion: ifVersion, scene: scene)
        }
    }

    /// A scene's own user domain, or its workspace's domain.
    func preferenceDomain(_ kind: DomainKind, for scene: Scene) -> PreferenceDomain {
        PreferenceDomain(workspace: scene.owner.workspace, user: kind == .user ? scene.owner.user : nil)
    }

    mutating func observe(_ kind: DomainKind, _ keyPath: KeyPath, _ options: ObservationOptions,
                          scene: Scene) throws(PanesError) -> JSONValue {
        var observations = preferences.observations[scene.id] ?? .init()
        guard observations.list.count < settings.maxObservationsPerScene else {
            throw PanesError(.tooMany, "this scene already has \(observations.list.count) observations (setting `maxObservationsPerScene`)")
        }
        let domain = preferenceDomain(kind, for: scene)
        let observation = PreferenceState.Observation(id: observations.nextID, domain: domain, kind: kind,
                                                      keyPath: keyPath, options: options)
        observations.nextID += 1
        observations.list.append(observation)
        preferences.observations[scene.id] = observations
        preferences.observers[domain, default: []].insert(scene.id)

        if options.contains(.initial) {
            let keys = preferences.keys(domain, kind, under: keyPath)
            for key in keys {
                let current = preferences.effective(domain, kind, key)!
                send(.event(ServerEvent("preferenceChanged", JSONValue.object([
                    "domain": .string(kind.rawValue), "keyPath": .string(key.string), "version": .int(current.version),
                    "observations": [.int(Int64(observation.id))], "new": current.value, "initial": true,
                    "isDefault": current.isDefault ? true : nil,
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

    /// Sets (`value` non-nil) or removes a key. Validates everything first, so a refused change
    /// leaves no trace; a change to the value already there is a no-op that notifies no one.
    mutating func change(_ kind: DomainKind, _ key: KeyPath, to value: JSONValue?, ifVersion: Int64?,
                         scene: Scene) throws(PanesError) -> JSONValue {
        if kind == .workspace, scene.role < settings.workspacePreferenceWriters {
            throw PanesError(.forbidden, "writing workspace preferences needs the role `\(settings.workspacePreferenceWriters.rawValue)` (setting `workspacePreferenceWriters`); you are `\(scene.role.rawValue)`")
        }
        let domain = preferenceDomain(kind, for: scene)
        if let value, let registration = preferences.defaults.registration(kind, key), !registration.type.admits(value) {
            throw PanesError(.typeMismatch, "`\(key)` takes \(registration.type.rawValue) values (its registered default's type), not \(value.typeName)",
                             field: "value")
        }
        if let conflict = preferences.conflict(domain, kind, with: key) {
            throw PanesError(.keyPathConflict, "`\(key)` nests with `\(conflict)`, which already has a value; a key cannot lie inside, or above, another",
                             field: "keyPath")
        }
        let stored = preferences.domains[domain]?.values[key.string]
        if let ifVersion, ifVersion != (stored?.version ?? 0) {
            throw PanesError(.versionConflict, "`\(key)` is at version \(stored?.version ?? 0), not \(ifVersion)", field: "ifVersion")
        }
        let before = preferences.effective(domain, kind, key)
        let unchanged = value.map { new in before.map { $0.value.sameValue(as: new) } ?? false } ?? (stored == nil)
        if unchanged {
            return ["version": .int(before?.version ?? 0), "changed": false]
        }

        var domainState = preferences.domains[domain] ?? StoredPreferences()
        domainState.version += 1
        let version = domainState.version
        if let value {
            domainState.values[key.string] = VersionedValue(value: value, version: version)
            persist(.putPreference(domain, keyPath: key.string, value: value, version: version))
        } else {
            domainState.values[key.string] = nil
            persist(.removePreference(domain, keyPath: key.string, version: version))
        }
        preferences.domains[domain] = domainState
        notifyObservers(of: key, in: domain, kind: kind, version: version, old: before?.value)
        return ["version": .int(version), "changed": true]
    }

    /// One `preferenceChanged` per observing scene, listing that scene's matching observations.
    /// Scenes whose notification is identical share one encoded message.
    mutating func notifyObservers(of key: KeyPath, in domain: PreferenceDomain, kind: DomainKind, version: Int64,
                                  old: JSONValue?) {
        let now = preferences.effective(domain, kind, key)
        struct Shape: Hashable {
            let ids: [Int]
            let wantsNew: Bool
            let wantsOld: Bool
        }
        var groups: [Shape: [ConnectionID]] = [:]
        var order: [Shape] = []
        for sceneID in preferences.observers[domain] ?? [] {
            guard let scene = scenes[sceneID], let observations = preferences.observations[sceneID] else { continue }
            var ids: [Int] = []
            var options: ObservationOptions = []
            for observation in observations.list where observation.domain == domain && observation.keyPath.contains(key) {
                ids.append(observation.id)
                options.formUnion(observation.options)
            }
            guard !ids.isEmpty else { continue }
            let shape = Shape(ids: ids, wantsNew: options.contains(.new), wantsOld: options.contains(.old))
            if groups[shape] == nil { order.append(shape) }
            groups[shape, default: []].append(scene.connection)
        }
        for shape in order {
            let event = ServerEvent("preferenceChanged", JSONValue.object([
                "domain": .string(kind.rawValue), "keyPath": .string(key.string), "version": .int(version),
                "observations": .array(shape.ids.map { .int(Int64($0)) }),
                "new": shape.wantsNew ? now?.value : nil,
                "old": shape.wantsOld ? (old ?? .null) : nil,
                "removed": preferences.domains[domain]?.values[key.string] == nil ? true : nil,
                "isDefault": now?.isDefault == true ? true : nil,
            ]).objectValue!)
            broadcast(.event(event), to: groups[shape]!.sorted())
        }
    }

    mutating func preferencesSceneWillEnd(_ scene: Scene) {
        guard let observations = preferences.observations.removeValue(forKey: scene.id) else { return }
        for domain in Set(observations.list.map(\.domain)) {
            preferences.observers[domain]?.remove(scene.id)
            if preferences.observers[domain]?.isEmpty == true { preferences.observers[domain] = nil }
        }
    }
}
