import Foundation
import PanesCore
import PanesJSON
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// Preferences over real sockets: one toggle, every window.
@Suite struct PreferencesEndToEndTests {
    @Test(arguments: TestStore.endToEnd) func aSettingToggledInOneWindowReachesEveryOtherWindow(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let windows = try (0..<3).map { _ in try server.client() }
        for window in windows {
            _ = window.connect()
            #expect(window.request("observe", ["domain": "user", "keyPath": "editor", "options": ["initial", "new"]])["ok"] == true)
            // The initial value came before the reply.
            #expect(window.event("preferenceChanged")?["initial"] == true)
        }
        let set = windows[0].request("setPreference", ["domain": "user", "keyPath": "editor.showWordCount", "value": true])
        #expect(set["result"]?["changed"] == true)
        for window in windows {
            let event = window.next { $0["type"] == "preferenceChanged" && $0["initial"] == nil }
            #expect(event?["keyPath"] == "editor.showWordCount")
            #expect(event?["new"] == true)
            #expect(event?["version"] == set["result"]?["version"])
        }
    }

    @Test(arguments: TestStore.endToEnd) func concurrentWritersAreSeenInTheSameOrderEverywhere(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let observers = try (0..<3).map { _ in try server.client() }
        for observer in observers {
            _ = observer.connect()
            _ = observer.request("observe", ["domain": "user", "keyPath": "race"])
        }
        let writers = try (0..<3).map { _ in try server.client() }
        for writer in writers { _ = writer.connect() }
        // Fire every write before reading any reply, so they interleave on the server.
        for round in 0..<20 {
            for (index, writer) in writers.enumerated() {
                writer.sendRaw(#"{"type":"setPreference","id":"r\#(round)","domain":"user","keyPath":"race.value","value":"\#(index)-\#(round)"}"#)
            }
        }
        for writer in writers { #expect(writer.next { $0["re"] == "r19" }?["ok"] == true) }
        var sequences: [[JSONValue]] = []
        for observer in observers {
            var seen: [JSONValue] = []
            while seen.count < 60, let event = observer.event("preferenceChanged") {
                seen.append(["version": event["version"]!, "new": event["new"]!])
            }
            sequences.append(seen)
        }
        #expect(sequences[0].count == 60)
        #expect(sequences[0].map { $0["version"]! } == (1...60).map { JSONValue.int(Int64($0)) })
        #expect(sequences[1] == sequences[0])
        #expect(sequences[2] == sequences[0])
    }

    @Test(arguments: TestStore.endToEnd) func valuesSurviveARestartAndStayWithTheirUser(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let alice = try server.client()
        _ = alice.connect(name: "alice")
        _ = alice.request("setPreference", ["domain": "user", "keyPath": "appearance.theme", "value": "dark"])
        _ = alice.request("setPreference", ["domain": "workspace", "keyPath": "team.motto", "value": "ship it"])
        server.kill(SIGKILL)
        server.wait()

        let restarted = try server.restarted()
        let again = try restarted.client()
        _ = again.connect(name: "alice")
        _ = again.request("observe", ["domain": "user", "keyPath": "appearance.theme", "options": ["initial"]])
        #expect(again.event("preferenceChanged")?["new"] == "dark")
        let bob = try restarted.client()
        _ = bob.connect(name: "bob")
        _ = bob.request("observe", ["domain": "user", "keyPath": "appearance.theme", "options": ["initial"]])
        #expect(bob.event("preferenceChanged")?["new"] == "system", "bob sees the default, not alice's value")
        _ = bob.request("observe", ["domain": "workspace", "keyPath": "team", "options": ["initial"]])
        #expect(bob.event("preferenceChanged")?["new"] == "ship it", "the workspace domain is shared")
    }

    @Test(arguments: TestStore.endToEnd) func configuredDefaultsAndTheirTypesAreEnforced(_ store: TestStore) throws {
        let server = try ServerProcess(store: store, config: ["preferenceDefaults": ["user": ["ui.scale": ["type": "number", "default": 1.0]]]])
        let client = try server.client()
        _ = client.connect()
        _ = client.request("observe", ["domain": "user", "keyPath": "ui.scale", "options": ["initial"]])
        let initial = client.event("preferenceChanged")
        #expect(initial?["new"]?.doubleValue == 1.0)
        #expect(initial?["isDefault"] == true)
        let wrong = client.request("setPreference", ["domain": "user", "keyPath": "ui.scale", "value": "large"])
        #expect(wrong["error"]?["code"] == "type_mismatch")
        #expect(wrong["error"]?["message"]?.stringValue?.contains("`ui.scale` takes number") == true)
        let unknown = client.request("observe", ["domain": "device", "keyPath": "x"])
        #expect(unknown["error"]?["code"] == "unknown_domain")
    }

    @Test(arguments: TestStore.endToEnd) func aLockedManagedPreferenceOverridesEveryoneAndRefusesWrites(_ store: TestStore) throws {
        let server = try ServerProcess(store: store, config: ["managedPreferences": ["user": [
            "editor.fontSize": ["value": 14, "locked": true],
            "appearance.theme": ["value": "dark"],
        ]]])
        let alice = try server.client()
        _ = alice.connect()
        #expect(alice.request("observe", ["domain": "user", "keyPath": "editor", "options": ["initial"]])["ok"] == true)
        let initial = alice.event("preferenceChanged")
        #expect(initial?["keyPath"] == "editor.fontSize")
        #expect(initial?["new"] == 14)
        #expect(initial?["locked"] == true)
        let refused = alice.request("setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 20])
        #expect(refused["error"]?["code"] == "preference_locked")
        #expect(refused["error"]?["action"] == "giveUp")
        #expect(alice.request("removePreference", ["domain": "user", "keyPath": "editor.fontSize"])["error"]?["code"]
            == "preference_locked")
        // An unlocked managed value is a default: the user may override it.
        #expect(alice.request("setPreference", ["domain": "user", "keyPath": "appearance.theme", "value": "light"])["ok"] == true)
    }

    @Test func aBadManagedPreferenceRefusesToStart() {
        #expect(throws: (any Error).self) {
            _ = try ServerProcess(config: ["managedPreferences": ["user": ["editor.fontSize": ["value": "big", "locked": true]]]])
        }
    }

    @Test(arguments: TestStore.endToEnd) func aNullValueIsStoredAsNullNotTakenForAMissingOne(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let client = try server.client()
        _ = client.connect()
        #expect(client.request("setPreference", ["domain": "user", "keyPath": "sidebar.width"])["error"]?["code"] == "missing_field")
        #expect(client.request("setPreference", ["domain": "user", "keyPath": "sidebar.width", "value": .null])["ok"] == true)
        _ = client.request("observe", ["domain": "user", "keyPath": "sidebar.width", "options": ["initial"]])
        let initial = client.event("preferenceChanged")
        #expect(initial?["new"] == .null)
        #expect(initial?["exists"] == nil)
    }
}
