import PanesCore
import PanesCoreTestSupport
import Testing

@Suite struct HubPreferencesTests {
    @Test func initialValuesArriveBeforeTheReplyAndIncludeDefaults() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        _ = harness.request(scene, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 18])
        let effects = harness.send(scene, "observe", ["domain": "user", "keyPath": "editor", "options": ["initial", "new"]])
        let messages = effects.messages(to: scene)
        #expect(messages.map { $0["type"] } == ["preferenceChanged", "preferenceChanged", "reply"])
        #expect(messages[0]["keyPath"] == "editor.fontSize")
        #expect(messages[0]["new"] == 18)
        #expect(messages[0]["isDefault"] == nil)
        #expect(messages[1]["keyPath"] == "editor.showWordCount")
        #expect(messages[1]["new"] == false)
        #expect(messages[1]["isDefault"] == true)
        #expect(messages.allSatisfy { $0["type"] == "reply" || $0["initial"] == true })
    }

    @Test func withoutInitialNothingIsSentUntilAChange() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        let effects = harness.send(scene, "observe", ["domain": "user", "keyPath": "editor.showWordCount"])
        #expect(effects.messages(to: scene).map { $0["type"] } == ["reply"])
    }

    @Test func anUnsetKeyWithoutADefaultIsReportedAsNotExisting() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        let events = harness.send(scene, "observe", ["domain": "user", "keyPath": "sidebar.width", "options": ["initial"]])
            .events(to: scene, named: "preferenceChanged")
        #expect(events.count == 1)
        #expect(events[0]["exists"] == false)
        #expect(events[0]["new"] == nil)
    }

    @Test func aSubtreeObserverHearsTheExactKeyThatChangedInEveryScene() {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let (b, _) = harness.connect()
        _ = harness.request(b, "observe", ["domain": "user", "keyPath": "editor"])
        let effects = harness.send(a, "setPreference", ["domain": "user", "keyPath": "editor.showWordCount", "value": true])
        let event = effects.events(to: b, named: "preferenceChanged").first
        #expect(event?["keyPath"] == "editor.showWordCount")
        #expect(event?["new"] == true)
        #expect(event?["observations"] == [1])
        #expect(effects.events(to: a, named: "preferenceChanged").isEmpty, "a does not observe")
    }

    @Test func oldAndNewAreSentOnlyWhenAsked() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        _ = harness.request(scene, "observe", ["domain": "user", "keyPath": "appearance.theme", "options": ["old"]])
        let first = harness.send(scene, "setPreference", ["domain": "user", "keyPath": "appearance.theme", "value": "dark"])
            .events(to: scene, named: "preferenceChanged")[0]
        #expect(first["old"] == "system")
        #expect(first["new"] == nil)
        _ = harness.request(scene, "observe", ["domain": "user", "keyPath": "appearance", "options": ["new"]])
        let second = harness.send(scene, "setPreference", ["domain": "user", "keyPath": "appearance.theme", "value": "light"])
            .events(to: scene, named: "preferenceChanged")
        #expect(second.count == 1, "one event per scene, naming both observations")
        #expect(second[0]["observations"] == [1, 2])
        #expect(second[0]["old"] == "dark")
        #expect(second[0]["new"] == "light")
    }

    @Test func compareAndSetRefusesAStaleVersionAndChangesNothing() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        let first = harness.request(scene, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 16, "ifVersion": 0])
        #expect(first["result"] == ["version": 1, "changed": true])
        let stale = harness.request(scene, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 20, "ifVersion": 0])
        #expect(stale["error"]?["code"] == "version_conflict")
        #expect(stale["error"]?["message"]?.stringValue?.contains("version 1") == true)
        let fresh = harness.request(scene, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 20, "ifVersion": 1])
        #expect(fresh["result"]?["version"] == 2)
    }

    @Test func aSetThatChangesNothingNotifiesNoOneAndStoresNothing() {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let (b, _) = harness.connect()
        _ = harness.request(b, "observe", ["domain": "user", "keyPath": "editor"])
        _ = harness.request(a, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 17])
        let persisted = harness.effects.persisted.count
        let again = harness.send(a, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 17.0])
        #expect(again.messages(to: a).last?["result"] == ["version": 1, "changed": false])
        #expect(again.events(to: b, named: "preferenceChanged").isEmpty)
        // Setting an unset key to its default changes nothing either.
        let toDefault = harness.send(a, "setPreference", ["domain": "user", "keyPath": "editor.showWordCount", "value": false])
        #expect(toDefault.events(to: b, named: "preferenceChanged").isEmpty)
        #expect(harness.effects.persisted.count == persisted)
    }

    @Test func removingRevertsToTheDefaultAndSaysSo() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        _ = harness.request(scene, "setPreference", ["domain": "user", "keyPath": "editor.showWordCount", "value": true])
        _ = harness.request(scene, "observe", ["domain": "user", "keyPath": "editor.showWordCount", "options": ["new", "old"]])
        let effects = harness.send(scene, "removePreference", ["domain": "user", "keyPath": "editor.showWordCount"])
        let event = effects.events(to: scene, named: "preferenceChanged")[0]
        #expect(event["removed"] == true)
        #expect(event["new"] == false)
        #expect(event["isDefault"] == true)
        #expect(event["old"] == true)
        #expect(effects.persisted == [.removePreference(PreferenceDomain(workspace: "default", user: "alice"),
                                                        keyPath: "editor.showWordCount", version: 2)])
    }

    @Test func everySceneSeesEveryChangeInTheSameOrder() {
        var harness = HubHarness()
        let writers = (0..<3).map { _ in harness.connect().0 }
        let watchers = (0..<3).map { _ in harness.connect().0 }
        for watcher in watchers { _ = harness.request(watcher, "observe", ["domain": "user", "keyPath": "counter"]) }
        for round in 0..<10 {
            for (index, writer) in writers.enumerated() {
                harness.send(writer, "setPreference", ["domain": "user", "keyPath": "counter.value",
                                                       "value": .int(Int64(round * 3 + index))])
            }
        }
        let sequences = watchers.map { watcher in
            harness.effects.events(to: watcher, named: "preferenceChanged").map { ($0["version"]!, $0["new"]!) }
        }
        #expect(sequences[0].map(\.0) == (1...30).map { JSONValue.int(Int64($0)) })
        for sequence in sequences.dropFirst() {
            #expect(sequence.map(\.0) == sequences[0].map(\.0))
            #expect(sequence.map(\.1) == sequences[0].map(\.1))
        }
    }

    @Test func oneUsersPreferencesNeverReachAnother() {
        var harness = HubHarness()
        let (alice, _) = harness.connect(name: "alice")
        let (bob, _) = harness.connect(name: "bob")
        _ = harness.request(bob, "observe", ["domain": "user", "keyPath": "editor"])
        let effects = harness.send(alice, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 30])
        #expect(effects.events(to: bob, named: "preferenceChanged").isEmpty)
        let bobsView = harness.send(bob, "observe", ["domain": "user", "keyPath": "editor.fontSize", "options": ["initial"]])
            .events(to: bob, named: "preferenceChanged")
        #expect(bobsView.first?["new"] == 15)
    }

    @Test func theWorkspaceDomainIsSharedByMembersAndGuardedByRole() {
        let auth = Authenticator.tokens([
            "t-owner": .init(user: "olga", name: "Olga", workspaces: ["acme": .owner]),
            "t-viewer": .init(user: "vic", name: "Vic", workspaces: ["acme": .viewer]),
        ])
        var harness = HubHarness(authenticator: auth)
        let (owner, _) = harness.connect(["workspace": "acme", "auth": ["token": "t-owner"]])
        let (viewer, _) = harness.connect(["workspace": "acme", "auth": ["token": "t-viewer"]])
        _ = harness.request(viewer, "observe", ["domain": "workspace", "keyPath": "workspace"])
        let effects = harness.send(owner, "setPreference", ["domain": "workspace", "keyPath": "workspace.accent", "value": "teal"])
        #expect(effects.events(to: viewer, named: "preferenceChanged").first?["new"] == "teal")
        let refused = harness.request(viewer, "setPreference", ["domain": "workspace", "keyPath": "workspace.accent", "value": "red"])
        #expect(refused["error"]?["code"] == "forbidden")
        #expect(refused["error"]?["message"]?.stringValue?.contains("workspacePreferenceWriters") == true)
    }

    @Test func unobservingStopsNotificationsAndObservationsEndWithTheScene() {
        var harness = HubHarness()
        let (writer, _) = harness.connect()
        let (watcher, _) = harness.connect()
        let id = harness.request(watcher, "observe", ["domain": "user", "keyPath": "editor"])["result"]!["observation"]!
        #expect(harness.request(watcher, "unobserve", ["observation": id])["ok"] == true)
        #expect(harness.send(writer, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 9])
            .events(to: watcher, named: "preferenceChanged").isEmpty)
        #expect(harness.request(watcher, "unobserve", ["observation": id])["error"]?["code"] == "observation_not_found")

        _ = harness.request(watcher, "observe", ["domain": "user", "keyPath": "editor"])
        harness.run(.closed(watcher, abnormal: false))
        #expect(harness.send(writer, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 10])
            .events(to: watcher, named: "preferenceChanged").isEmpty)
    }

    @Test func scenesWithTheSameObservationsShareOneEncodedMessage() {
        var harness = HubHarness()
        let (writer, _) = harness.connect()
        let watchers = (0..<5).map { _ in harness.connect().0 }
        for watcher in watchers { _ = harness.request(watcher, "observe", ["domain": "user", "keyPath": "editor"]) }
        let effects = harness.send(writer, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 12])
        let broadcasts = effects.filter { if case .broadcast = $0 { true } else { false } }
        #expect(broadcasts.count == 1)
    }

    static let badRequests: [(JSONObject, String, String)] = [
        (["domain": "global", "keyPath": "a"], "unknown_domain", "domain"),
        (["domain": "user", "keyPath": "a..b"], "invalid_key_path", "keyPath"),
        (["domain": "user", "keyPath": "a b"], "invalid_key_path", "keyPath"),
        (["domain": "user", "keyPath": .string(Array(repeating: "k", count: 17).joined(separator: "."))], "invalid_key_path", "keyPath"),
        (["domain": "user", "keyPath": "editor.fontSize", "value": "big"], "type_mismatch", "value"),
        (["domain": "user", "keyPath": "editor.showWordCount", "value": 1], "type_mismatch", "value"),
        (["domain": "user", "keyPath": "editor", "value": [:]], "key_path_conflict", "keyPath"),
        (["domain": "user", "keyPath": "editor.fontSize.px", "value": 1], "key_path_conflict", "keyPath"),
        (["domain": "user", "keyPath": "a"], "missing_field", "value"),
        (["domain": "user", "keyPath": "a", "value": 1, "ifVersion": -1], "invalid_field", "ifVersion"),
    ]

    @Test(arguments: badRequests)
    func badSetsAreRefusedNamingTheProblemAndChangeNothing(_ fields: JSONObject, code: String, field: String) {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        _ = harness.request(scene, "observe", ["domain": "user", "keyPath": "editor"])
        let before = harness.effects.count
        let effects = harness.send(scene, "setPreference", fields)
        #expect(effects.messages(to: scene).last?["error"]?["code"] == .string(code))
        #expect(effects.messages(to: scene).last?["error"]?["field"] == .string(field))
        #expect(effects.persisted.isEmpty)
        #expect(effects.events(to: scene, named: "preferenceChanged").isEmpty)
        #expect(harness.effects.count == before + effects.count)
    }

    @Test func oversizeValuesAndTooManyObservationsAreRefused() {
        var settings = Settings()
        settings.maxPreferenceValueBytes = 32
        settings.maxObservationsPerScene = 2
        var harness = HubHarness(settings: settings)
        let (scene, _) = harness.connect()
        let big = harness.request(scene, "setPreference", ["domain": "user", "keyPath": "notes.text",
                                                           "value": .string(String(repeating: "x", count: 40))])
        #expect(big["error"]?["code"] == "too_large")
        #expect(big["error"]?["message"]?.stringValue?.contains("maxPreferenceValueBytes") == true)
        _ = harness.request(scene, "observe", ["domain": "user", "keyPath": "a"])
        _ = harness.request(scene, "observe", ["domain": "user", "keyPath": "b"])
        let third = harness.request(scene, "observe", ["domain": "user", "keyPath": "c"])
        #expect(third["error"]?["code"] == "too_many")
        #expect(third["error"]?["message"]?.stringValue?.contains("maxObservationsPerScene") == true)
    }

    @Test func storedValuesAndVersionsComeBackAfterARestart() {
        var first = HubHarness()
        let (scene, _) = first.connect()
        _ = first.request(scene, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 21])
        _ = first.request(scene, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 22])
        let store = MemoryStore()
        try! store.apply(first.effects.persisted)
        var second = HubHarness(stored: try! store.loadState(), store: store)
        let (again, _) = second.connect()
        let initial = second.send(again, "observe", ["domain": "user", "keyPath": "editor.fontSize", "options": ["initial"]])
            .events(to: again, named: "preferenceChanged")[0]
        #expect(initial["new"] == 22)
        #expect(initial["version"] == 2)
        #expect(second.request(again, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 23])["result"]?["version"] == 3)
    }
}
