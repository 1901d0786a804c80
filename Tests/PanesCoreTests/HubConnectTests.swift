@_spi(Testing) import PanesCore
import PanesCoreTestSupport
import Testing

@Suite struct HubConnectTests {
    @Test func connectingWithoutASessionCreatesOneDurablyBeforeReplying() {
        var harness = HubHarness()
        let connection = harness.open()
        let effects = harness.send(connection, "connect", ["protocol": 1, "auth": ["name": "alice"]])
        let persistIndex = effects.firstIndex { if case .persist = $0 { true } else { false } }
        let replyIndex = effects.firstIndex { if case .send(.connected, _) = $0 { true } else { false } }
        #expect(persistIndex != nil && replyIndex != nil && persistIndex! < replyIndex!)
        let result = effects.messages(to: connection)[0]["result"]!
        #expect(result["created"] == true)
        #expect(result["session"]?["configuration"] == "workspace")
        #expect(result["session"]?["secret"]?.stringValue?.count == 32)
        #expect(result["restoration"]?["status"] == "none")
    }

    /// The one session the effects write, when they write it whole once, live, and nothing of
    /// sessions quietly; nil (an issue recorded) otherwise.
    static func storedLiveOnce(_ effects: [Effect], sourceLocation: SourceLocation = #_sourceLocation) -> SceneSession? {
        let written = effects.persisted.filter {
            switch $0 {
            case .putSession, .putSessionLiveness: true
            default: false
            }
        }
        guard written.count == 1, case .putSession(let stored) = written[0] else {
            Issue.record("expected one putSession, got \(written)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(stored.liveSince == stored.lastActiveAt, sourceLocation: sourceLocation)
        #expect(!effects.contains { if case .persistQuietly = $0 { true } else { false } }, sourceLocation: sourceLocation)
        return stored
    }

    /// A new session is stored once, already live (what a restart after a kill needs), in the
    /// commit its reply waits for: its attach writes nothing more, quietly or not.
    @Test func aNewSessionIsStoredLiveOnceBeforeTheReply() throws {
        var harness = HubHarness()
        let connection = harness.open()
        let effects = harness.send(connection, "connect", ["protocol": 1, "auth": ["name": "alice"]])
        guard let stored = Self.storedLiveOnce(effects) else { return }
        #expect(try harness.store.loadState().sessions.contains(stored))
        let id = try #require(effects.messages(to: connection)[0]["result"]?["session"]?["persistentIdentifier"])
        #expect(id == .string(stored.id.rawValue))
    }

    @Test func resumingWithTheSecretBringsBackActivityAndUserInfo() {
        var harness = HubHarness()
        let (first, result) = harness.connect()
        _ = harness.request(first, "updateActivity", ["activity": ["activityType": "panes.document", "title": "Notes",
                                                                   "userInfo": ["scroll": 120]]])
        _ = harness.request(first, "setUserInfo", ["userInfo": ["sidebar": false]])
        harness.run(.closed(first, abnormal: false))

        let (_, resumed) = harness.connect(["session": HubHarness.credentials(result)])
        #expect(resumed["created"] == false)
        #expect(resumed["session"]?["persistentIdentifier"] == result["session"]?["persistentIdentifier"])
        #expect(resumed["session"]?["stateRestorationActivity"]?["userInfo"]?["scroll"] == 120)
        #expect(resumed["session"]?["userInfo"]?["sidebar"] == false)
        #expect(resumed["restoration"]?["status"] == "restored")
        #expect(resumed["session"]?["restorationMetadata"]?["serverVersion"] == "test")
    }

    @Test func aWrongSecretAndAnotherUsersSessionLookTheSameAsNoSession() {
        var harness = HubHarness()
        let (first, result) = harness.connect()
        harness.run(.closed(first, abnormal: false))
        let id = result["session"]!["persistentIdentifier"]!

        let wrongSecret = harness.request(harness.open(), "connect", [
            "protocol": 1, "auth": ["name": "alice"], "session": ["id": id, "secret": "00"]])
        let otherUser = harness.request(harness.open(), "connect", [
            "protocol": 1, "auth": ["name": "bob"], "session": HubHarness.credentials(result)])
        let missing = harness.request(harness.open(), "connect", [
            "protocol": 1, "auth": ["name": "alice"], "session": ["id": "ffff", "secret": "00"]])
        #expect(wrongSecret["error"]?["code"] == "session_not_found")
        #expect(wrongSecret["error"] == otherUser["error"])
        #expect(wrongSecret["error"] == missing["error"])
    }

    @Test func aSessionInAnotherWorkspaceIsNotFound() {
        var harness = HubHarness()
        let (_, result) = harness.connect(["workspace": "acme"])
        let reply = harness.request(harness.open(), "connect", [
            "protocol": 1, "auth": ["name": "alice"], "workspace": "beta", "session": HubHarness.credentials(result)])
        #expect(reply["error"]?["code"] == "session_not_found")
    }

    @Test func aDuplicatedTabWhoseOriginalAnswersThePingGetsAFork() {
        var harness = HubHarness()
        let (original, result) = harness.connect()
        _ = harness.request(original, "updateActivity", ["activity": ["activityType": "panes.document", "title": "A"]])
        _ = harness.request(original, "setUserInfo", ["userInfo": ["colour": "teal"]])

        let duplicate = harness.open()
        let effects = harness.send(duplicate, "connect", ["protocol": 1, "auth": ["name": "alice"],
                                                          "session": HubHarness.credentials(result)])
        #expect(effects.probes == [original])
        #expect(effects.messages(to: duplicate).isEmpty)

        let answered = harness.run(.pong(original))
        let reply = answered.messages(to: duplicate)[0]["result"]!
        #expect(reply["forkedFrom"] == result["session"]?["persistentIdentifier"])
        #expect(reply["session"]?["persistentIdentifier"] != result["session"]?["persistentIdentifier"])
        #expect(reply["session"]?["userInfo"]?["colour"] == "teal")
        #expect(reply["session"]?["stateRestorationActivity"]?["title"] == "A")
        #expect(answered.closes(original).isEmpty)
    }

    /// A fork is stored once, already live, in the commit its reply waits for, as a new session
    /// is: its attach writes nothing more, quietly or not, so a kill right after the reply finds
    /// it counted in use until the restart, not idle since it was made.
    @Test func aForkIsStoredLiveOnceBeforeTheReplyAndComesBackInUseAfterARestart() throws {
        var harness = HubHarness()
        let (original, result) = harness.connect()
        let duplicate = harness.open()
        _ = harness.send(duplicate, "connect", ["protocol": 1, "auth": ["name": "alice"],
                                                "session": HubHarness.credentials(result)])
        let effects = harness.run(.pong(original))
        guard let stored = Self.storedLiveOnce(effects) else { return }
        let reply = try #require(effects.messages(to: duplicate).first?["result"])
        #expect(reply["forkedFrom"] == result["session"]?["persistentIdentifier"])
        #expect(reply["session"]?["persistentIdentifier"] == .string(stored.id.rawValue))

        harness.clock.advance(600_000)
        var restarted = try harness.restarted(ids: .sequential(from: 1_000))
        let (other, _) = restarted.connect()
        let sessions = restarted.request(other, "listSessions")["result"]?["sessions"]?.arrayValue ?? []
        let fork = sessions.first { $0["persistentIdentifier"] == .string(stored.id.rawValue) }
        #expect(fork?["lastActiveAt"] == .int(restarted.clock.now), "in use until the restart")
    }

    /// A client may send requests right behind `connect`: while the connect waits for the
    /// live window's answer they wait too, and are answered after it, in order, as the scene.
    @Test func requestsSentBehindAWaitingConnectAreAnsweredAfterItInOrder() {
        var harness = HubHarness()
        let (original, result) = harness.connect()
        let duplicate = harness.open()
        var effects = harness.send(duplicate, "connect", ["id": 1, "protocol": 1, "auth": ["name": "alice"],
                                                          "session": HubHarness.credentials(result)])
        effects += harness.send(duplicate, "setUserInfo", ["id": 2, "userInfo": ["pane": "left"]])
        effects += harness.send(duplicate, "listSessions", ["id": 3])
        #expect(effects.messages(to: duplicate).isEmpty, "nothing is answered before the connect")
        let answered = harness.run(.pong(original)).messages(to: duplicate).filter { $0["type"] == "reply" }
        #expect(answered.map { $0["re"] } == [1, 2, 3])
        #expect(answered.allSatisfy { $0["ok"] == true }, "\(answered)")
        #expect(answered[1]["result"]?["userInfo"]?["pane"] == "left")
        #expect(answered[2]["result"]?["sessions"]?.arrayValue?.count == 2, "the original and the fork")
    }

    /// Held requests are bounded (`maxRequestsBehindConnect`), and after a connect that failed
    /// they get what they would have got without it.
    @Test func requestsBehindAConnectAreBoundedAndRefusedIfItFails() {
        var settings = Settings()
        settings.maxRequestsBehindConnect = 2
        settings.maxSessionsPerUser = 1
        var harness = HubHarness(settings: settings)
        let (original, result) = harness.connect()
        let duplicate = harness.open()
        var effects = harness.send(duplicate, "connect", ["id": 1, "protocol": 1, "auth": ["name": "alice"],
                                                          "session": HubHarness.credentials(result)])
        for id in 2...4 { effects += harness.send(duplicate, "listSessions", ["id": .int(Int64(id))]) }
        let refused = effects.messages(to: duplicate)
        #expect(refused.map { $0["re"] } == [4])
        #expect(refused.first?["error"]?["code"] == "too_many")
        #expect(refused.first?["error"]?["message"]?.stringValue?.contains("maxRequestsBehindConnect") == true)
        // The original answers, but a fork would be over `maxSessionsPerUser`: the connect
        // fails, and what waited behind it is not connected.
        let replies = harness.run(.pong(original)).messages(to: duplicate).filter { $0["type"] == "reply" }
        #expect(replies.map { $0["re"] } == [1, 2, 3])
        #expect(replies.first?["ok"] == false, "\(replies)")
        #expect(replies.dropFirst().allSatisfy { $0["error"]?["code"] == "not_connected" }, "\(replies)")
    }

    @Test func aResumeWhoseOldSocketNeverAnswersTakesTheSessionBack() {
        var harness = HubHarness()
        let (stale, result) = harness.connect()
        let newcomer = harness.open()
        harness.send(newcomer, "connect", ["protocol": 1, "auth": ["name": "alice"], "session": HubHarness.credentials(result)])
        harness.clock.advance(Millis(Settings().livenessProbeTimeoutMs) + 1)
        let effects = harness.run(.tick)
        #expect(effects.closes(stale) == [.replaced])
        let reply = effects.messages(to: newcomer).first { $0["type"] == "reply" }
        #expect(reply?["result"]?["created"] == false)
        #expect(reply?["result"]?["forkedFrom"] == nil)
    }

    @Test func aResumeIsAnsweredAtOnceWhenTheOldSceneClosesDuringTheProbe() {
        var harness = HubHarness()
        let (old, result) = harness.connect()
        let newcomer = harness.open()
        harness.send(newcomer, "connect", ["protocol": 1, "auth": ["name": "alice"], "session": HubHarness.credentials(result)])
        let effects = harness.run(.closed(old, abnormal: true))
        #expect(effects.messages(to: newcomer).first?["result"]?["session"]?["persistentIdentifier"]
            == result["session"]?["persistentIdentifier"])
    }

    @Test func onlyConnectIsAcceptedFirstAndOnlyOnce() {
        var harness = HubHarness()
        let connection = harness.open()
        #expect(harness.request(connection, "ping")["error"]?["code"] == "not_connected")
        _ = harness.request(connection, "connect", ["protocol": 1])
        #expect(harness.request(connection, "connect", ["protocol": 1])["error"]?["code"] == "already_connected")
        #expect(harness.request(connection, "ping")["ok"] == true)
    }

    @Test func anUnsupportedProtocolVersionIsRefusedAndTheConnectionStaysUsable() {
        var harness = HubHarness()
        let connection = harness.open()
        let reply = harness.request(connection, "connect", ["protocol": 2])
        #expect(reply["error"]?["code"] == "unsupported_protocol")
        #expect(reply["error"]?["field"] == "protocol")
        #expect(harness.request(connection, "connect", ["protocol": 1])["ok"] == true)
    }

    @Test func tokensNameTheUserAndTheirWorkspaces() {
        let auth = Authenticator.tokens(["t-alice": .init(user: "alice", name: "Alice", workspaces: ["acme": .viewer])])
        var harness = HubHarness(authenticator: auth)
        let bad = harness.request(harness.open(), "connect", ["protocol": 1, "workspace": "acme", "auth": ["token": "nope"]])
        #expect(bad["error"]?["code"] == "unauthenticated")
        let foreign = harness.request(harness.open(), "connect", ["protocol": 1, "workspace": "beta", "auth": ["token": "t-alice"]])
        #expect(foreign["error"]?["code"] == "not_a_member")
        let byName = harness.request(harness.open(), "connect", ["protocol": 1, "workspace": "acme", "auth": ["name": "alice"]])
        #expect(byName["error"]?["code"] == "unauthenticated")
        let good = harness.request(harness.open(), "connect", ["protocol": 1, "workspace": "acme", "auth": ["token": "t-alice"]])
        #expect(good["result"]?["user"] == ["id": "alice", "name": "Alice", "role": "viewer"])
    }

    @Test func aUserCannotHoldMoreSessionsThanTheLimit() {
        var settings = Settings()
        settings.maxSessionsPerUser = 2
        var harness = HubHarness(settings: settings)
        _ = harness.connect()
        _ = harness.connect()
        let reply = harness.request(harness.open(), "connect", ["protocol": 1, "auth": ["name": "alice"]])
        #expect(reply["error"]?["code"] == "too_many")
        #expect(reply["error"]?["message"]?.stringValue?.contains("maxSessionsPerUser") == true)
    }

    @Test func aConnectionThatNeverConnectsIsClosedAfterTheTimeout() {
        var harness = HubHarness()
        let idle = harness.open()
        harness.clock.advance(Millis(Settings().connectTimeoutMs) + 1)
        #expect(harness.run(.tick).closes(idle) == [.connectTimeout])
    }

    /// A `connect` the runtime read from its text (`HubEvent.request`, `ConnectFrameReader`) is
    /// handled as the frame's tree is (`HubEvent.received`): the same effects, in order, and the
    /// same request taken for the reply's timing, for a new session, a connect on a scene, a
    /// resume, a protocol the server does not speak, and connects over the rate limit.
    @Test func aConnectReadFromItsTextIsHandledAsItsTree() throws {
        var settings = Settings()
        settings.rateLimitBurst = 3
        settings.rateLimitPerSecond = 1
        var viaTree = HubHarness(settings: settings)
        var viaRequest = HubHarness(settings: settings)
        let decoder = MessageDecoder(settings: settings)
        func open() -> ConnectionID {
            let connection = viaTree.open()
            #expect(viaRequest.open() == connection)
            return connection
        }
        func both(_ frame: JSONObject, on connection: ConnectionID) throws -> [Effect] {
            let tree = viaTree.run(.received(connection, .object(frame)))
            guard case .success(let request) = decoder.decode(.object(frame)) else { throw PanesError(.internalError, "not a request") }
            let read = viaRequest.run(.request(connection, request))
            #expect(tree == read, "\(frame)")
            let taken = (viaTree.hub.takeReceivedRequest(), viaRequest.hub.takeReceivedRequest())
            #expect(taken.0 != nil && taken.0?.id == taken.1?.id && taken.0?.typeIndex == taken.1?.typeIndex)
            return tree
        }
        let first = open()
        let created = try both(["type": "connect", "id": 1, "protocol": 1, "auth": ["name": "alice"]], on: first)
        let result = try #require(created.messages(to: first).first?["result"])
        #expect(try both(["type": "connect", "id": 2, "protocol": 1], on: first).messages(to: first).first?["error"]?["code"]
            == "already_connected")
        #expect(viaTree.run(.closed(first, abnormal: false)) == viaRequest.run(.closed(first, abnormal: false)))
        let second = open()
        let resumed = try both(["type": "connect", "id": "r", "protocol": 1, "auth": ["name": "alice"],
                                "session": HubHarness.credentials(result)], on: second)
        #expect(resumed.messages(to: second).first?["result"]?["created"] == false)
        let third = open()
        var codes: [JSONValue?] = []
        for id in 3...6 {
            codes.append(try both(["type": "connect", "id": .int(Int64(id)), "protocol": 2], on: third)
                .messages(to: third).first?["error"]?["code"])
        }
        #expect(codes == ["unsupported_protocol", "unsupported_protocol", "unsupported_protocol", "rate_limited"])
    }
}
