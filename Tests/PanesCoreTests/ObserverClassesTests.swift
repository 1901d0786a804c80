import PanesCore
import PanesCoreTestSupport
import Testing

/// The fan-out groups of `ObserverClasses`: who shares one encoded notification, and that the
/// groups follow every `observe`, `unobserve` and scene end.
@Suite struct ObserverClassesTests {
    /// The broadcasts and single sends of `preferenceChanged`, as (observations, connections).
    static func notifications(_ effects: [Effect]) -> [(ids: JSONValue?, to: [ConnectionID])] {
        effects.compactMap { effect in
            switch effect {
            case .broadcast(let message, let connections):
                let json = message.json
                return json["type"] == "preferenceChanged" ? (json["observations"], connections) : nil
            case .send(let message, let connection):
                let json = message.json
                return json["type"] == "preferenceChanged" ? (json["observations"], [connection]) : nil
            default:
                return nil
            }
        }
    }

    @Test func scenesThatDifferOnlyInObservationsTheKeyMissesShareOneMessageInConnectionOrder() {
        var harness = HubHarness()
        let (writer, _) = harness.connect()
        let watchers = (0..<4).map { _ in harness.connect().0 }
        for watcher in watchers { _ = harness.request(watcher, "observe", ["domain": "user", "keyPath": "editor"]) }
        // Two of them also observe another subtree: a change under `editor` is the same for all four.
        for watcher in watchers[2...] { _ = harness.request(watcher, "observe", ["domain": "user", "keyPath": "appearance"]) }
        let sent = Self.notifications(harness.send(writer, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 12]))
        #expect(sent.count == 1)
        #expect(sent.first?.ids == [1])
        #expect(sent.first?.to == watchers)

        let other = Self.notifications(harness.send(writer, "setPreference", ["domain": "user", "keyPath": "appearance.theme", "value": "dark"]))
        #expect(other.count == 1)
        #expect(other.first?.ids == [2])
        #expect(other.first?.to == Array(watchers[2...]))
    }

    @Test func groupsFollowObserveUnobserveAndTheEndOfAScene() {
        var harness = HubHarness()
        let (writer, _) = harness.connect()
        let (a, _) = harness.connect()
        let (b, _) = harness.connect()
        let (c, _) = harness.connect()
        for watcher in [a, b, c] { _ = harness.request(watcher, "observe", ["domain": "user", "keyPath": "editor"]) }
        func change(_ value: Int) -> [(ids: JSONValue?, to: [ConnectionID])] {
            Self.notifications(harness.send(writer, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": .int(Int64(value))]))
        }
        #expect(change(10).map(\.to) == [[a, b, c]])

        // b now has two observations of the key: its notification differs from the others'.
        let second = harness.request(b, "observe", ["domain": "user", "keyPath": "editor.fontSize"])["result"]!["observation"]!
        let split = change(11)
        #expect(split.map(\.to) == [[a, c], [b]])
        #expect(split.map(\.ids) == [[1], [1, 2]])

        _ = harness.request(b, "unobserve", ["observation": second])
        #expect(change(12).map(\.to) == [[a, b, c]])

        harness.run(.closed(a, abnormal: false))
        #expect(change(13).map(\.to) == [[b, c]])

        let (d, _) = harness.connect()
        _ = harness.request(d, "observe", ["domain": "user", "keyPath": "editor"])
        #expect(change(14).map(\.to) == [[b, c, d]])
    }

    @Test func anotherUsersAndTheWorkspacesObserversAreNotInAUsersGroups() {
        var harness = HubHarness()
        let (writer, _) = harness.connect()
        let (mine, _) = harness.connect()
        let (theirs, _) = harness.connect(name: "bob")
        let (workspace, _) = harness.connect()
        _ = harness.request(mine, "observe", ["domain": "user", "keyPath": "editor"])
        _ = harness.request(theirs, "observe", ["domain": "user", "keyPath": "editor"])
        _ = harness.request(workspace, "observe", ["domain": "workspace", "keyPath": "editor"])
        let sent = Self.notifications(harness.send(writer, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 12]))
        #expect(sent.map(\.to) == [[mine]])
    }
}
