import Foundation
import PanesCore
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// Scene sessions over real sockets against the real binary.
@Suite struct SessionEndToEndTests {
    @Test(arguments: TestStore.endToEnd) func aReconnectingClientResumesItsSessionExactly(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let first = try server.client()
        let created = first.connect()
        #expect(first.request("updateActivity", ["activity": ["activityType": "panes.document", "title": "Plan",
                                                              "userInfo": ["note": "ünïcødé ✓", "scroll": 340]]])["ok"] == true)
        #expect(first.request("setUserInfo", ["userInfo": ["sidebar": true, "colour": "teal"]])["ok"] == true)
        #expect(first.request("setUserInfo", ["userInfo": ["colour": "plum"], "mode": "merge"])["result"]?["userInfo"]
            == ["sidebar": true, "colour": "plum"])
        first.socket.close()

        let second = try server.client()
        let resumed = second.connect(["session": TestClient.credentials(created)])
        #expect(resumed["created"] == false)
        #expect(resumed["session"]?["persistentIdentifier"] == created["session"]?["persistentIdentifier"])
        #expect(resumed["session"]?["stateRestorationActivity"]?["userInfo"] == ["note": "ünïcødé ✓", "scroll": 340])
        #expect(resumed["session"]?["userInfo"] == ["sidebar": true, "colour": "plum"])
        #expect(resumed["restoration"]?["status"] == "restored")
        #expect(resumed["session"]?["restorationMetadata"]?["clientVersion"] == "swift-tests")
    }

    @Test(arguments: TestStore.endToEnd) func aWrongSecretIsRefusedWithoutRevealingTheSession(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let owner = try server.client()
        let created = owner.connect()
        let intruder = try server.client()
        let reply = intruder.request("connect", ["protocol": 1, "auth": ["name": "alice"],
                                                 "session": ["id": created["session"]!["persistentIdentifier"]!, "secret": "guess"]])
        #expect(reply["error"]?["code"] == "session_not_found")
        let otherUser = intruder.request("connect", ["protocol": 1, "auth": ["name": "mallory"],
                                                     "session": TestClient.credentials(created)])
        #expect(otherUser["error"] == reply["error"])
    }

    @Test(arguments: TestStore.endToEnd) func aDuplicatedTabGetsAForkWhileTheOriginalKeepsItsSession(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let original = try server.client()
        let created = original.connect()
        _ = original.request("updateActivity", ["activity": ["activityType": "panes.document", "title": "Original"]])
        _ = original.request("setUserInfo", ["userInfo": ["sidebar": false]])

        // Same sessionStorage, as a duplicated tab has: the server pings the original, which answers.
        let duplicate = try server.client()
        let forked = duplicate.connect(["session": TestClient.credentials(created)])
        #expect(forked["forkedFrom"] == created["session"]?["persistentIdentifier"])
        #expect(forked["session"]?["persistentIdentifier"] != created["session"]?["persistentIdentifier"])
        #expect(forked["session"]?["stateRestorationActivity"]?["title"] == "Original")
        #expect(forked["session"]?["userInfo"] == ["sidebar": false])
        #expect(original.request("ping")["ok"] == true, "the original tab keeps working")
    }

    @Test(arguments: TestStore.endToEnd) func aClientThatDroppedOffResumesInsteadOfForking(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let tab = try server.client()
        let created = tab.connect()
        tab.socket.abort()
        let again = try server.client()
        let resumed = again.connect(["session": TestClient.credentials(created)])
        #expect(resumed["forkedFrom"] == nil)
        #expect(resumed["session"]?["persistentIdentifier"] == created["session"]?["persistentIdentifier"])
    }

    @Test(arguments: TestStore.endToEnd) func crashingSoonAfterRestoringGivesACleanStart(_ store: TestStore) throws {
        let server = try ServerProcess(store: store, config: ["settings": ["cleanStartThreshold": 2]])
        let setup = try server.client()
        let created = setup.connect()
        _ = setup.request("updateActivity", ["activity": ["activityType": "panes.document", "title": "Crashy"]])
        setup.socket.close()
        for _ in 0..<2 {
            let tab = try server.client()
            #expect(tab.connect(["session": TestClient.credentials(created)])["restoration"]?["status"] == "restored")
            tab.socket.abort()
        }
        let clean = try server.client()
        let result = clean.connect(["session": TestClient.credentials(created)])
        #expect(result["restoration"]?["status"] == "cleanStart")
        #expect(result["session"]?["stateRestorationActivity"] == .null)
    }

    @Test(arguments: TestStore.endToEnd) func staleRestorationIsNotHandedBack(_ store: TestStore) throws {
        let server = try ServerProcess(store: store, config: ["settings": ["restorationMaxAgeMs": 1000]])
        let setup = try server.client()
        let created = setup.connect()
        _ = setup.request("updateActivity", ["activity": ["activityType": "panes.document"]])
        setup.socket.close()
        Thread.sleep(forTimeInterval: 1.1)
        let late = try server.client()
        #expect(late.connect(["session": TestClient.credentials(created)])["restoration"]?["status"] == "stale")
    }

    @Test(arguments: TestStore.endToEnd) func discardingASessionClosesItsWindowAndForgetsIt(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let doomed = try server.client()
        let created = doomed.connect()
        let switcher = try server.client()
        _ = switcher.connect()
        #expect(switcher.request("listSessions", ["watch": true])["result"]?["sessions"]?.arrayValue?.count == 2)
        let reply = switcher.request("requestDestruction", ["session": created["session"]!["persistentIdentifier"]!,
                                                            "animation": "decline"])
        #expect(reply["ok"] == true)
        #expect(doomed.event("sessionDestroyed")?["animation"] == "decline")
        #expect(doomed.waitForClose() == CloseCode.sessionDestroyed.rawValue)
        #expect(switcher.event("sessionsChanged")?["sessions"]?.arrayValue?.count == 1)
        let retry = try server.client()
        #expect(retry.request("connect", ["protocol": 1, "auth": ["name": "alice"],
                                          "session": TestClient.credentials(created)])["error"]?["code"] == "session_not_found")
    }

    @Test(arguments: TestStore.endToEnd) func tokensModeAdmitsOnlyListedTokens(_ store: TestStore) throws {
        let folder = ServerProcess.tempFolder()
        let tokens = folder.appendingPathComponent("tokens.json")
        try Data(#"{"tokens":[{"token":"tok-alice","user":"alice","name":"Alice","workspaces":{"acme":"editor"}}]}"#.utf8)
            .write(to: tokens)
        let server = try ServerProcess(store: store, extra: ["--auth", "tokens", "--tokens", tokens.path])
        let client = try server.client()
        #expect(client.request("connect", ["protocol": 1, "workspace": "acme", "auth": ["token": "wrong"]])["error"]?["code"]
            == "unauthenticated")
        #expect(client.request("connect", ["protocol": 1, "workspace": "other", "auth": ["token": "tok-alice"]])["error"]?["code"]
            == "not_a_member")
        let result = client.connect(["workspace": "acme", "auth": ["token": "tok-alice"]])
        #expect(result["user"]?["role"] == "editor")
    }

    @Test(arguments: TestStore.endToEnd) func aWindowReportsNewTraitsAfterConnect(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let client = try server.client()
        _ = client.connect(["traits": ["width": "regular", "pointer": "fine"]])
        let reply = client.request("updateTraits", ["traits": ["width": "compact", "pointer": "coarse"]])
        #expect(reply["result"]?["traits"] == ["width": "compact", "pointer": "coarse"])
        #expect(reply["result"]?["previous"] == ["width": "regular", "pointer": "fine"])
        #expect(client.request("updateTraits", ["traits": ["width": "wide"]])["error"]?["field"] == "traits.width")
    }
}
