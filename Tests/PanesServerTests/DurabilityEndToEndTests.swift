import Foundation
import PanesCore
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// Whatever the server acknowledged survives SIGKILL.
@Suite struct DurabilityEndToEndTests {
    @Test(arguments: TestStore.endToEnd) func everyAcknowledgedSaveSurvivesSIGKILL(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let tab = try server.client()
        let created = tab.connect()
        var lastAcknowledged: Int64 = -1
        for step in 0..<200 {
            // Every write waits for its acknowledgement; the kill comes right after the last one.
            let reply = tab.request("setUserInfo", ["userInfo": ["step": .int(Int64(step))], "mode": "merge"])
            guard reply["ok"] == true else { break }
            lastAcknowledged = Int64(step)
            _ = tab.request("updateActivity", ["activity": ["activityType": "panes.document",
                                                            "userInfo": ["step": .int(Int64(step))]]])
        }
        server.kill(SIGKILL)
        server.wait()
        #expect(lastAcknowledged == 199)

        let restarted = try server.restarted()
        let again = try restarted.client()
        let resumed = again.connect(["session": TestClient.credentials(created)])
        #expect(resumed["session"]?["userInfo"]?["step"] == .int(lastAcknowledged))
        #expect(resumed["session"]?["stateRestorationActivity"]?["userInfo"]?["step"] == .int(lastAcknowledged))
    }

    @Test(arguments: TestStore.endToEnd) func manyScenesWritingAtOnceLoseNothingAcknowledged(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let tabs = try (0..<8).map { _ in try server.client() }
        let sessions = tabs.map { $0.connect() }
        // Interleave sends from all tabs before reading replies, so commits group.
        for round in 0..<25 {
            for tab in tabs {
                tab.sendRaw(#"{"type":"setUserInfo","id":"w\#(round)","mode":"merge","userInfo":{"round":\#(round)}}"#)
            }
        }
        for tab in tabs {
            let last = tab.next { $0["re"] == "w24" }
            #expect(last?["ok"] == true)
        }
        server.kill(SIGKILL)
        server.wait()
        let restarted = try server.restarted()
        for session in sessions {
            let client = try restarted.client()
            #expect(client.connect(["session": TestClient.credentials(session)])["session"]?["userInfo"]?["round"] == 24)
        }
    }

    @Test(arguments: TestStore.endToEnd) func sigtermDrainsTellsScenesToReconnectAndExitsCleanly(_ store: TestStore) throws {
        let server = try ServerProcess(store: store, config: ["settings": ["drainReconnectAfterMs": 1500]])
        let tab = try server.client()
        _ = tab.connect()
        server.kill(SIGTERM)
        #expect(tab.event("goingAway")?["reconnectAfterMs"] == 1500)
        #expect(tab.waitForClose() == CloseCode.goingAway.rawValue)
        #expect(server.wait() == 0)
    }

    /// `--sync normal` trades a power loss's last commits for speed, but still survives a
    /// killed process: the write-ahead log is in the OS's hands once a commit returns.
    @Test func withSyncNormalAcknowledgedSavesStillSurviveSIGKILL() throws {
        let server = try ServerProcess(extra: ["--sync", "normal"])
        #expect(server.banner.contains("synchronous normal"), "\(server.banner)")
        let tab = try server.client()
        let created = tab.connect()
        for step in 0..<50 {
            #expect(tab.request("setUserInfo", ["userInfo": ["step": .int(Int64(step))]])["ok"] == true)
        }
        server.kill(SIGKILL)
        server.wait()
        let restarted = try server.restarted()
        #expect(restarted.banner.contains("synchronous full"), "the default is full")
        let again = try restarted.client()
        #expect(again.connect(["session": TestClient.credentials(created)])["session"]?["userInfo"]?["step"] == 49)
    }
}
