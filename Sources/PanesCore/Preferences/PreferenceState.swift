/// Every preference domain's committed values, the operator's managed values, and every
/// scene's observations.
struct PreferenceState: Sendable {
    struct Observation: Sendable {
        let id: Int
        let domain: PreferenceDomain
        let kind: DomainKind
        let keyPath: KeyPath
        let options: ObservationOptions
    }

    /// One scene's observations; identifiers count up per scene, so scenes that observe the
    /// same keys in the same order get byte-identical notifications (encoded once).
    struct SceneObservations: Sendable {
        var nextID = 1
        var list: [Observation] = []
    }

    let defaults: PreferenceDefaults
    let managed: ManagedPreferences
    private var domains: [PreferenceDomain: PreferenceDomainState] = [:]
    private var observations: [SceneID: SceneObservations] = [:]
    /// Scenes with at least one observation of a domain: the only ones a change can reach.
    private var observers: [PreferenceDomain: Set<SceneID>] = [:]
    /// Each domain's observers grouped for fan-out, built when a change first needs it
    /// (`observerClasses(of:connection:)`); a domain's entry goes whenever its observations change.
    private var observerClasses: [PreferenceDomain: ObserverClasses] = [:]

    init(stored: [PreferenceDomain: StoredPreferences], defaults: PreferenceDefaults,
         managed: ManagedPreferences = ManagedPreferences()) {
        for (domain, values) in stored { domains[domain] = PreferenceDomainState(values) }
        self.defaults = defaults
        self.managed = managed
    }

    // MARK: Committed values

    /// A domain's committed values held here; nil when nothing of it is held.
    func domain(_ domain: PreferenceDomain) -> PreferenceDomainState? {
        domains[domain]
    }

    /// A domain's committed version (0 when nothing of it is held).
    func version(of domain: PreferenceDomain) -> Int64 {
        domains[domain]?.version ?? 0
    }

    /// The domains held or observed here, in order: those another node may have changed.
    var followedDomains: [PreferenceDomain] {
        Set(domains.keys).union(observers.keys).sorted()
    }

    /// Takes a committed change of one key (nil: removed) at `version`.
    mutating func apply(_ keyPath: String, _ value: JSONValue?, version: Int64, in domain: PreferenceDomain) {
        domains[domain, default: PreferenceDomainState()].apply(keyPath, value, version: version)
    }

    /// Moves the domain's version to `version` (a change that names no key this node can read).
    mutating func apply(version: Int64, in domain: PreferenceDomain) {
        domains[domain, default: PreferenceDomainState()].apply(version: version)
    }

    // MARK: Observations

    /// How many observations the scene has.
    func observationCount(of scene: SceneID) -> Int {
        observations[scene]?.list.count ?? 0
    }

    /// Adds an observation of the scene's, numbered after its others.
    mutating func observe(_ domain: PreferenceDomain, _ kind: DomainKind, _ keyPath: KeyPath,
                          _ options: ObservationOptions, by scene: SceneID) -> Observation {
        var list = observations[scene] ?? .init()
        let observation = Observation(id: list.nextID, domain: domain, kind: kind, keyPath: keyPath, options: options)
        list.nextID += 1
        list.list.append(observation)
        observations[scene] = list
        observers[domain, default: []].insert(scene)
        observerClasses[domain] = nil
        return observation
    }

    /// Removes the scene's observation `id`.
    /// - Returns: nil when the scene has no such observation.
    mutating func unobserve(_ id: Int, by scene: SceneID) -> Observation? {
        guard let index = observations[scene]?.list.firstIndex(where: { $0.id == id }) else { return nil }
        let removed = observations[scene]!.list.remove(at: index)
        observerClasses[removed.domain] = nil
        if !observations[scene]!.list.contains(where: { $0.domain == removed.domain }) {
            observers[removed.domain]?.remove(scene)
        }
        return removed
    }

    /// A scene ended: its observations go.
    mutating func sceneEnded(_ scene: SceneID) {
        guard let ended = observations.removeValue(forKey: scene) else { return }
        for domain in Set(ended.list.map(\.domain)) {
            observers[domain]?.remove(scene)
            if observers[domain]?.isEmpty == true { observers[domain] = nil }
            observerClasses[domain] = nil
        }
    }

    /// Whether any scene observes the domain.
    func isObserved(_ domain: PreferenceDomain) -> Bool {
        observers[domain]?.isEmpty == false
    }

    /// The domain's observers grouped by identical notification (`ObserverClasses`), built once
    /// and kept until its observations change.
    /// - Parameter connection: each observing scene's connection (nil: gone).
    mutating func observerClasses(of domain: PreferenceDomain, connection: (SceneID) -> ConnectionID?) -> ObserverClasses {
        if let built = observerClasses[domain] { return built }
        let classes = ObserverClasses(observers: observers[domain] ?? [], of: domain, observations: observations,
                                      connection: connection)
        observerClasses[domain] = classes
        return classes
    }

    /// A key's value as readers see it: a locked managed value, else the stored value, else the
    /// managed default, else the registered default.
    func effective(_ domain: PreferenceDomain, _ kind: DomainKind, _ key: KeyPath) -> EffectiveValue? {
        effective(domain, kind, key, stored: domains[domain]?.values[key.string])
    }

    /// The same, with the stored value given (a batch reads through its own pending writes).
    func effective(_ domain: PreferenceDomain, _ kind: DomainKind, _ key: KeyPath,
                   stored: VersionedValue?) -> EffectiveValue? {
        if let managed = managed.value(kind, key), managed.locked {
            return EffectiveValue(value: managed.value, version: stored?.version ?? 0, source: .locked)
        }
        if let stored { return EffectiveValue(value: stored.value, version: stored.version, source: .stored) }
        if let managed = managed.value(kind, key) {
            return EffectiveValue(value: managed.value, version: 0, source: .default)
        }
        if let registration = defaults.registration(kind, key) {
            return EffectiveValue(value: registration.value, version: 0, source: .default)
        }
        return nil
    }

    /// Every key with a value, a managed value or a default at or below `path`, in key order.
    /// Costs what is below `path` plus a look at the defaults, not a scan of the domain, when
    /// `path` is a stored key; a subtree observation scans the domain once.
    func keys(_ domain: PreferenceDomain, _ kind: DomainKind, under path: KeyPath) -> [KeyPath] {
        var keys = Set<KeyPath>()
        if let state = domains[domain] {
            if state.values[path.string] != nil {
                keys.insert(path)
            } else if state.below[path.string] != nil {
                let prefix = path.string + "."
                for key in state.values.keys where key.hasPrefix(prefix) {
                    if let key = try? KeyPath(key) { keys.insert(key) }
                }
            }
        }
        for key in defaults.registrations[kind]?.keys ?? [:].keys where path.contains(key) { keys.insert(key) }
        for key in managed.keys(kind) where path.contains(key) { keys.insert(key) }
        return keys.sorted()
    }
}

/// A value as observers see it, and where it comes from.
struct EffectiveValue: Sendable {
    enum Source: Sendable { case stored, `default`, locked }
    let value: JSONValue
    let version: Int64
    let source: Source
}
