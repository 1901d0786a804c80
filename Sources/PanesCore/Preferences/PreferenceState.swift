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
    var domains: [PreferenceDomain: PreferenceDomainState] = [:]
    var observations: [SceneID: SceneObservations] = [:]
    /// Scenes with at least one observation of a domain: the only ones a change can reach.
    var observers: [PreferenceDomain: Set<SceneID>] = [:]
    /// Each domain's observers grouped for fan-out, built when a change first needs it
    /// (`Hub.notifyObservers`); a domain's entry goes whenever its observations change.
    var observerClasses: [PreferenceDomain: ObserverClasses] = [:]

    init(stored: [PreferenceDomain: StoredPreferences], defaults: PreferenceDefaults,
         managed: ManagedPreferences = ManagedPreferences()) {
        for (domain, values) in stored { domains[domain] = PreferenceDomainState(values) }
        self.defaults = defaults
        self.managed = managed
    }

    /// Drops what was derived from a domain's observations: call on every change to them.
    mutating func observationsChanged(in domain: PreferenceDomain) {
        observerClasses[domain] = nil
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
