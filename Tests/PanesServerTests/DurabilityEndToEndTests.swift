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

    /// A window that resumed and was live when the server was killed: its resume wrote only the
    /// times it attached at (`putSessionLiveness`), and the restart finds the whole record, and
    /// the session counted in use until the restart, not idle since its window last closed.
    @Test(arguments: TestStore.endToEnd)
    func aWindowResumedBeforeSIGKILLComesBackWholeAndCountedInUse(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let first = try server.client()
        let created = first.connect()
        #expect(first.request("setUserInfo", ["userInfo": ["kept": "yes"], "mode": "merge"])["ok"] == true)
        #expect(first.request("updateActivity", ["activity": ["activityType": "panes.document", "title": "Kept"]])["ok"] == true)
        first.socket.close()
        let again = try server.client()
        #expect(again.connect(["session": TestClient.credentials(created)])["created"] == false)
        let resumedAt = Int64(Date().timeIntervalSince1970 * 1000)
        // Acknowledged once durable, and handed to the store after the resume's write: that one is too.
        #expect(again.request("setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 21])["ok"] == true)
        server.kill(SIGKILL)
        server.wait()

        let restarted = try server.restarted()
        let listed = try Self.listed(created["session"]?["persistentIdentifier"], by: restarted)
        // In use until the restart; without the resume's write, its last close (before `resumedAt`).
        #expect((listed?["lastActiveAt"]?.intValue ?? 0) > resumedAt, "\(String(describing: listed))")
        let back = try restarted.client().connect(["session": TestClient.credentials(created)])
        #expect(back["created"] == false)
        #expect(back["session"]?["userInfo"]?["kept"] == "yes")
        #expect(back["session"]?["stateRestorationActivity"]?["title"] == "Kept")
    }

    /// A fork (a duplicated tab whose original answers) killed right after its reply comes
    /// back, with quiet writes held for as long as allowed, is counted in use until the
    /// restart, not idle since it was made. It checks only that: how many times the fork is
    /// written is HubConnectTests' to check (the server shows no count of writes).
    @Test(arguments: TestStore.endToEnd)
    func aForkKilledRightAfterItsReplyComesBackCountedInUse(_ store: TestStore) throws {
        let server = try ServerProcess(store: store, config: ["settings": ["quietWriteDelayMs": 1000]])
        let original = try server.client()
        let created = original.connect()
        let duplicate = try server.client()
        let forked = duplicate.connect(["session": TestClient.credentials(created)])
        #expect(forked["forkedFrom"] == created["session"]?["persistentIdentifier"])
        let repliedAt = Int64(Date().timeIntervalSince1970 * 1000)
        // Both windows still open: a close would write the fork's liveness itself.
        withExtendedLifetime((original, duplicate)) {
            server.kill(SIGKILL)
            server.wait()
        }

        let listed = try Self.listed(forked["session"]?["persistentIdentifier"], by: server.restarted())
        // In use until the restart; stored without its liveness, only since it was made.
        #expect((listed?["lastActiveAt"]?.intValue ?? 0) > repliedAt, "\(String(describing: listed))")
    }

    /// The session `listSessions` shows with this persistent identifier, to a new window of
    /// the same user on `server`.
    static func listed(_ id: JSONValue?, by server: ServerProcess) throws -> JSONValue? {
        let other = try server.client()
        _ = other.connect()
        return other.request("listSessions")["result"]?["sessions"]?.arrayValue?.first { $0["persistentIdentifier"] == id }
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

    /// A merge whose key is the same Unicode text as a stored one in other bytes (NFD `é` after
    /// NFC) replaces it: a stored userInfo with both would be refused by the decoder each store
    /// loads it with, and the session would come back with none of its userInfo.
    @Test(arguments: TestStore.endToEnd) func aMergedKeyInOtherBytesOfTheSameTextSurvivesARestart(_ store: TestStore) throws {
        let (nfc, nfd) = ("jos\u{E9}", "jose\u{301}")
        let server = try ServerProcess(store: store)
        let tab = try server.client()
        let created = tab.connect()
        #expect(tab.request("setUserInfo", ["userInfo": [nfc: 1, "keep": true]])["ok"] == true)
        let merged = tab.request("setUserInfo", ["userInfo": [nfd: 2], "mode": "merge"])
        let userInfo = merged["result"]?["userInfo"]?.objectValue
        #expect(userInfo?.count == 2 && userInfo?[nfd] == 2 && userInfo?[nfc] == nil && userInfo?["keep"] == true)
        server.kill(SIGKILL)
        server.wait()
        let restarted = try server.restarted()
        let again = try restarted.client()
        let resumed = again.connect(["session": TestClient.credentials(created)])["session"]?["userInfo"]?.objectValue
        #expect(resumed?.count == 2 && resumed?[nfd] == 2 && resumed?["keep"] == true)
    }
}
