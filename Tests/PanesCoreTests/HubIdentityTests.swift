@_spi(Testing) import PanesCore
import PanesCoreTestSupport
import Testing

/// Two users whose ids are canonically equivalent but differ in their bytes are two users, in
/// every auth mode and after a restart: sessions, the switcher, preferences and drags of one
/// are never the other's (CONCEPTS.md, invariant 10). End to end in `IdentityEndToEndTests`.
@Suite struct HubIdentityTests {
    static let nfc = "jos\u{E9}"
    static let nfd = "jose\u{301}"

    /// What the first user made, for the checks that the second cannot reach it.
    struct Made {
        let credentials: JSONValue
        let drag: JSONValue
    }

    /// The first user connects, sets a preference and begins a drag; the second connects.
    /// Checks each sees only their own session and preference, and cannot resume or drop the
    /// other's.
    static func checkApart(_ harness: inout HubHarness, first: JSONObject, second: JSONObject,
                           firstUser: String, secondUser: String) -> Made {
        let (a, resultA) = harness.connect(first)
        #expect(resultA["user"]?["id"] == .string(firstUser))
        #expect(harness.request(a, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 21])["ok"] == true)
        let drag = harness.request(a, "beginDrag", ["items": [["activity": ["activityType": "panes.document", "title": "Notes"]]]])["result"]?["drag"] ?? .null

        let (b, resultB) = harness.connect(second)
        #expect(resultB["user"]?["id"] == .string(secondUser))
        #expect(resultB["created"] == true)
        #expect(resultB["session"]?["persistentIdentifier"] != resultA["session"]?["persistentIdentifier"])
        checkSeparate(&harness, a: a, b: b, credentialsA: HubHarness.credentials(resultA), drag: drag)
        return Made(credentials: HubHarness.credentials(resultA), drag: drag)
    }

    static func checkSeparate(_ harness: inout HubHarness, a: ConnectionID, b: ConnectionID, credentialsA: JSONValue,
                              drag: JSONValue?) {
        let listA = harness.request(a, "listSessions")["result"]?["sessions"]?.arrayValue ?? []
        let listB = harness.request(b, "listSessions")["result"]?["sessions"]?.arrayValue ?? []
        #expect(listA.count == 1 && listB.count == 1, "each switcher lists its own user's window only")
        #expect(listA.first?["persistentIdentifier"] == credentialsA["id"])
        #expect(listB.first?["persistentIdentifier"] != credentialsA["id"])

        let seenByB = harness.send(b, "observe", ["domain": "user", "keyPath": "editor.fontSize", "options": ["initial"]])
            .events(to: b, named: "preferenceChanged")
        #expect(seenByB.first?["new"] == 15, "the default, not the other user's 21")
        let seenByA = harness.send(a, "observe", ["domain": "user", "keyPath": "editor.fontSize", "options": ["initial"]])
            .events(to: a, named: "preferenceChanged")
        #expect(seenByA.first?["new"] == 21)

        if let drag {
            #expect(harness.request(b, "drop", ["drag": drag, "target": "scene", "operation": "copy"]).errorCode == "forbidden")
        }
    }

    /// The second user tries to resume the first user's session with its secret.
    static func checkCannotResume(_ harness: inout HubHarness, _ second: JSONObject, _ credentials: JSONValue) {
        let connection = harness.open()
        var fields: JSONObject = ["protocol": 1, "session": credentials]
        fields.merge(second) { _, new in new }
        #expect(harness.request(connection, "connect", fields).errorCode == "session_not_found")
    }

    static func auth(name: String) -> JSONObject { ["auth": ["name": .string(name)]] }
    static func auth(token: String, workspace: String = "team") -> JSONObject {
        ["auth": ["token": .string(token)], "workspace": .string(workspace)]
    }

    @Test(arguments: IdentifierTests.equivalentPairs.indices)
    func openModeNamesThatDifferInBytesAreTwoUsersBeforeAndAfterARestart(_ index: Int) throws {
        let (one, other) = IdentifierTests.equivalentPairs[index]
        var harness = HubHarness()
        let made = Self.checkApart(&harness, first: Self.auth(name: one), second: Self.auth(name: other),
                                   firstUser: one, secondUser: other)
        Self.checkCannotResume(&harness, Self.auth(name: other), made.credentials)

        var restarted = try harness.restarted(ids: .sequential(from: 1_000))
        _ = restarted.start()
        let (a, _) = restarted.connect(["session": made.credentials, "auth": ["name": .string(one)]])
        let (b, resultB) = restarted.connect(Self.auth(name: other))
        #expect(resultB["created"] == true)
        Self.checkCannotResume(&restarted, Self.auth(name: other), made.credentials)
        let listB = restarted.request(b, "listSessions")["result"]?["sessions"]?.arrayValue ?? []
        #expect(listB.count == 2, "the second user's own two windows, never the first user's")
        #expect(!listB.contains { $0["persistentIdentifier"] == made.credentials["id"] })
        let listA = restarted.request(a, "listSessions")["result"]?["sessions"]?.arrayValue ?? []
        #expect(listA.map { $0["persistentIdentifier"] } == [made.credentials["id"]])
        let seenByB = restarted.send(b, "observe", ["domain": "user", "keyPath": "editor.fontSize", "options": ["initial"]])
            .events(to: b, named: "preferenceChanged")
        #expect(seenByB.first?["new"] == 15)
    }

    @Test func tokensThatDifferInBytesAreTwoTokens() throws {
        let file: JSONValue = ["tokens": [
            ["token": .string("t-" + Self.nfc), "user": "alice", "workspaces": ["team": "editor"]],
            ["token": .string("t-" + Self.nfd), "user": "bob", "workspaces": ["team": "editor"]],
        ]]
        var harness = HubHarness(authenticator: try Authenticator.tokens(json: file))
        let made = Self.checkApart(&harness, first: Self.auth(token: "t-" + Self.nfc), second: Self.auth(token: "t-" + Self.nfd),
                                   firstUser: "alice", secondUser: "bob")
        Self.checkCannotResume(&harness, Self.auth(token: "t-" + Self.nfd), made.credentials)
    }

    @Test func aTokensFileRefusesATokenListedTwice() {
        let file: JSONValue = ["tokens": [
            ["token": "same", "user": "alice", "workspaces": ["team": "editor"]],
            ["token": "same", "user": "bob", "workspaces": ["team": "owner"]],
        ]]
        #expect(throws: PanesError.self) { try Authenticator.tokens(json: file) }
    }

    @Test func aWorkspaceGrantIsLookedUpByItsBytes() throws {
        // KELVIN SIGN normalises to `K`: a grant for `\u{212A}team` (a workspace no one can
        // connect to: names are ASCII) must not open `Kteam`, whose documents it would show.
        let file: JSONValue = ["tokens": [["token": "kelvin", "user": "mallory", "workspaces": ["\u{212A}team": "owner"]]]]
        var tokens = HubHarness(authenticator: try Authenticator.tokens(json: file))
        let connection = tokens.open()
        #expect(tokens.request(connection, "connect", ["protocol": 1, "workspace": "Kteam", "auth": ["token": "kelvin"]])
            .errorCode == "not_a_member")

        let verifier = ListedTokens(tokens: [
            "kelvin": VerifiedToken(user: "mallory", name: "M", workspaces: ["\u{212A}team": .owner], expiresAt: nil),
        ], skew: 0)
        var jwt = HubHarness(authenticator: .verified(verifier))
        let scene = jwt.open()
        #expect(jwt.request(scene, "connect", ["protocol": 1, "workspace": "Kteam", "auth": ["token": "kelvin"]])
            .errorCode == "not_a_member")
    }

    @Test(arguments: IdentifierTests.equivalentPairs.indices)
    func verifiedUsersThatDifferInBytesAreTwoUsersAndMayNotRefreshAsEachOther(_ index: Int) throws {
        let (one, other) = IdentifierTests.equivalentPairs[index]
        let verifier = ListedTokens(tokens: [
            "one": VerifiedToken(user: one, name: "One", workspaces: ["team": .editor], expiresAt: nil),
            "other": VerifiedToken(user: other, name: "Other", workspaces: ["team": .editor], expiresAt: nil),
        ], skew: 0)
        var harness = HubHarness(authenticator: .verified(verifier))
        let made = Self.checkApart(&harness, first: Self.auth(token: "one"), second: Self.auth(token: "other"),
                                   firstUser: one, secondUser: other)
        Self.checkCannotResume(&harness, Self.auth(token: "other"), made.credentials)
        let (scene, _) = harness.connect(Self.auth(token: "one"))
        #expect(harness.request(scene, "refreshToken", ["token": "other"]).errorCode == "forbidden",
                "a token for the other user cannot take this scene over")

        var restarted = try harness.restarted(ids: .sequential(from: 1_000))
        _ = restarted.start()
        Self.checkCannotResume(&restarted, Self.auth(token: "other"), made.credentials)
        let (b, _) = restarted.connect(Self.auth(token: "other"))
        let listB = restarted.request(b, "listSessions")["result"]?["sessions"]?.arrayValue ?? []
        #expect(!listB.contains { $0["persistentIdentifier"] == made.credentials["id"] })
    }
}
