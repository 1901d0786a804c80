/// Every preference domain's values and every scene's observations.
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
    var domains: [PreferenceDomain: StoredPreferences]
    var observations: [SceneID: SceneObservations] = [:]
    /// Scenes with at least one observation of a domain: the only ones a change can reach.
    var observers: [PreferenceDomain: Set<SceneID>] = [:]

    init(stored: [PreferenceDomain: StoredPreferences], defaults: PreferenceDefaults) {
        self.domains = stored
        self.defaults = defaults
    }

    /// A key's value as readers see it: stored, else the registered default.
    func effective(_ domain: PreferenceDomain, _ kind: DomainKind, _ key: KeyPath)
        -> (value: JSONValue, version: Int64, isDefault: Bool)?
    {
        if let stored = domains[domain]?.values[key.string] { return (stored.value, stored.version, false) }
        if let registration = defaults.registration(kind, key) { return (registration.value, 0, true) }
        return nil
    }

    /// Every key with a value or a default at or below `path`, in key order.
    func keys(_ domain: PreferenceDomain, _ kind: DomainKind, under path: KeyPath) -> [KeyPath] {
        var keys = Set<KeyPath>()
        for key in domains[domain]?.values.keys ?? [:].keys {
            if let key = try? KeyPath(key), path.contains(key) { keys.insert(key) }
        }
        for key in defaults.registrations[kind]?.keys ?? [:].keys where path.contains(key) { keys.insert(key) }
        return keys.sorted()
    }

    /// A key that nests with `key` and holds a value or a default, if any.
    func conflict(_ domain: PreferenceDomain, _ kind: DomainKind, with key: KeyPath) -> KeyPath? {
        for existing in domains[domain]?.values.keys ?? [:].keys {
            if let existing = try? KeyPath(existing), existing.nests(with: key) { return existing }
        }
        return defaults.registrations[kind]?.keys.first { $0.nests(with: key) }
    }
}
