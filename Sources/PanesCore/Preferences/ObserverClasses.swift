/// One domain's observing scenes, grouped for fan-out by what they observe there.
///
/// Scenes whose observations of the domain are alike (the same identifiers, key paths and
/// options, in the same order: the tabs of one app observe alike) form one class and hear of
/// every change alike, so a change costs a look at each class, not two dictionary lookups per
/// observer and a sort of every connection. Built from the scenes' observations the first time
/// a change needs it, and dropped by `observe`, `unobserve` and a scene's end
/// (`PreferenceState.observationsChanged(in:)`), so it never disagrees with them.
struct ObserverClasses: Sendable {
    /// One observation, as far as it decides a notification.
    struct Entry: Hashable, Sendable {
        let id: Int
        let keyPath: KeyPath
        let options: ObservationOptions
    }

    /// What one notification says beyond the change itself: which of the scene's observations
    /// it answers and which values they want. Scenes with the same shape get the same bytes.
    struct Shape: Hashable, Sendable {
        let ids: [Int]
        let wantsNew: Bool
        let wantsOld: Bool
    }

    struct Class: Sendable {
        let entries: [Entry]
        /// Its scenes' connections, ascending.
        var connections: [ConnectionID]
    }

    /// In order of each class's lowest connection.
    private(set) var classes: [Class] = []

    /// Groups `observers` (scenes with some observation of `domain`) by their observations of it.
    /// - Parameter connection: a scene's connection; scenes without one are left out.
    init(observers: Set<SceneID>, of domain: PreferenceDomain,
         observations: [SceneID: PreferenceState.SceneObservations], connection: (SceneID) -> ConnectionID?) {
        var index: [[Entry]: Int] = [:]
        for sceneID in observers {
            guard let connection = connection(sceneID), let list = observations[sceneID]?.list else { continue }
            let entries = list.filter { $0.domain == domain }
                .map { Entry(id: $0.id, keyPath: $0.keyPath, options: $0.options) }
            guard !entries.isEmpty else { continue }
            if let existing = index[entries] {
                classes[existing].connections.append(connection)
            } else {
                index[entries] = classes.count
                classes.append(Class(entries: entries, connections: [connection]))
            }
        }
        for position in classes.indices { classes[position].connections.sort() }
        classes.sort { $0.connections[0] < $1.connections[0] }
    }

    /// The notifications a change of `key` makes: one per distinct shape, with the connections
    /// it goes to (ascending), in order of their lowest connection. Scenes none of whose
    /// observations contain `key` are not in any.
    func notifications(of key: KeyPath) -> [(shape: Shape, connections: [ConnectionID])] {
        var result: [(shape: Shape, connections: [ConnectionID])] = []
        var positions: [Shape: Int] = [:]
        var merged: [Int] = []
        for observerClass in classes {
            var ids: [Int] = []
            var options: ObservationOptions = []
            for entry in observerClass.entries where entry.keyPath.contains(key) {
                ids.append(entry.id)
                options.formUnion(entry.options)
            }
            guard !ids.isEmpty else { continue }
            let shape = Shape(ids: ids, wantsNew: options.contains(.new), wantsOld: options.contains(.old))
            if let position = positions[shape] {
                // Two classes that differ only in observations this key does not touch.
                result[position].connections.append(contentsOf: observerClass.connections)
                merged.append(position)
            } else {
                positions[shape] = result.count
                result.append((shape, observerClass.connections))
            }
        }
        for position in Set(merged) { result[position].connections.sort() }
        return result
    }
}
