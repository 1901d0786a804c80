import PanesCore
import PanesCoreTestSupport
import Testing

/// A token verifier for hub tests: a fixed list of tokens, with `exp` checked like the real
/// one (plus the skew). The real, cryptographic one is tested in PanesSecurityTests.
struct ListedTokens: TokenVerifier {
    let tokens: [String: VerifiedToken]
    let skew: Millis

    func verify(_ token: String, now: Millis) throws(PanesError) -> VerifiedToken {
        guard let verified = tokens[token] else { throw PanesError(.unauthenticated, "the token is not valid") }
        if let expiresAt = verified.expiresAt, now >= expiresAt + skew {
            throw PanesError(.tokenExpired, "the token expired")
        }
        return verified
    }
}

/// Scenes authenticated by expiring tokens (issue 13, item 5): the connect reply says when the
/// token expires, the scene is closed with 4010 then, and `refreshToken` replaces the token.
@Suite struct HubTokenTests {
    static let start: Millis = 1_700_000_000_000
    static let skew = 1_000
    static let hour: Millis = 3_600_000

    static func harness(maxTokenBytes: Int? = nil) -> HubHarness {
        var settings = Settings()
        settings.jwtClockSkewMs = skew
        if let maxTokenBytes { settings.maxTokenBytes = maxTokenBytes }
        let expires = start + hour
        let tokens: [String: VerifiedToken] = [
            "alice-editor": VerifiedToken(user: "alice", name: "Alice", workspaces: ["team": .editor], expiresAt: expires),
            "alice-later-viewer": VerifiedToken(user: "alice", name: "Alice L.", workspaces: ["team": .viewer],
                                                expiresAt: expires + hour),
            "alice-elsewhere": VerifiedToken(user: "alice", name: "Alice", workspaces: ["acme": .owner],
                                             expiresAt: expires + hour),
            "alice-expired": VerifiedToken(user: "alice", name: "Alice", workspaces: ["team": .editor],
                                           expiresAt: start - 10_000),
            "bob-editor": VerifiedToken(user: "bob", name: "Bob", workspaces: ["team": .editor], expiresAt: expires),
            "carol-viewer": VerifiedToken(user: "carol", name: "Carol", workspaces: ["team": .viewer], expiresAt: expires),
        ]
        let verifier = ListedTokens(tokens: tokens, skew: Millis(skew))
        let harness = HubHarness(settings: settings, authenticator: .verified(verifier))
        #expect(harness.clock.now == start)
        return harness
    }

    func connect(_ harness: inout HubHarness, token: String, workspace: String = "team") -> (ConnectionID, JSONValue) {
        let connection = harness.open()
        let reply = harness.request(connection, "connect", ["protocol": 1, "workspace": .string(workspace),
                                                            "auth": ["token": .string(token)]])
        return (connection, reply)
    }

    @Test func aTokenMakesTheSceneItsUserWithItsRoleAndTheReplySaysWhenItExpires() {
        var harness = Self.harness()
        let (_, reply) = connect(&harness, token: "alice-editor")
        let result = reply["result"]
        #expect(result?["user"] == ["id": "alice", "name": "Alice", "role": "editor"])
        #expect(result?["auth"]?["expiresAt"] == .int(Self.start + Self.hour))
    }

    @Test func credentialsThatDoNotExpireSayNull() {
        var harness = HubHarness()
        let (_, result) = harness.connect()
        #expect(result["auth"]?["expiresAt"] == .null)
    }

    @Test func aTokenForAnotherWorkspaceIsNotAMember() {
        var harness = Self.harness()
        #expect(connect(&harness, token: "alice-elsewhere").1.errorCode == "not_a_member")
        #expect(connect(&harness, token: "alice-editor", workspace: "acme").1.errorCode == "not_a_member")
    }

    @Test func anExpiredUnknownOrMissingTokenIsRefused() {
        var harness = Self.harness()
        #expect(connect(&harness, token: "alice-expired").1.errorCode == "token_expired")
        let unknown = connect(&harness, token: "forged").1
        #expect(unknown.errorCode == "unauthenticated")
        #expect(unknown["error"]?["field"] == "auth.token")
        let byName = harness.request(harness.open(), "connect", ["protocol": 1, "workspace": "team", "auth": ["name": "alice"]])
        #expect(byName.errorCode == "unauthenticated")
    }

    @Test func aViewersTokenCannotWrite() {
        var harness = Self.harness()
        let (viewer, _) = connect(&harness, token: "carol-viewer")
        #expect(harness.request(viewer, "createDocument", ["title": "Plan"]).errorCode == "forbidden")
        #expect(harness.request(viewer, "setPreference", ["domain": "workspace", "keyPath": "theme", "value": "dark"])
            .errorCode == "forbidden")
        let (editor, _) = connect(&harness, token: "bob-editor")
        #expect(harness.request(editor, "createDocument", ["title": "Plan"])["ok"] == true)
    }

    @Test func theSceneIsClosedWith4010WhenItsTokenExpiresAfterTheSkew() {
        var harness = Self.harness()
        let (scene, _) = connect(&harness, token: "alice-editor")
        let (other, _) = connect(&harness, token: "bob-editor")
        harness.clock.advance(Self.hour + Millis(Self.skew) - 1)
        #expect(harness.run(.tick).closes(scene).isEmpty)
        harness.clock.advance(1)
        let effects = harness.run(.tick)
        #expect(effects.closes(scene) == [.tokenExpired])
        #expect(effects.closes(other) == [.tokenExpired])
        #expect(harness.run(.tick).closes(scene).isEmpty, "closed once")
    }

    @Test func refreshingPostponesTheCloseAndTheNewTokensRoleApplies() {
        var harness = Self.harness()
        let (scene, _) = connect(&harness, token: "alice-editor")
        harness.clock.advance(Self.hour / 2)
        let reply = harness.request(scene, "refreshToken", ["token": "alice-later-viewer"])
        #expect(reply["result"]?["auth"]?["expiresAt"] == .int(Self.start + 2 * Self.hour))
        #expect(reply["result"]?["user"] == ["id": "alice", "name": "Alice L.", "role": "viewer"])
        #expect(harness.request(scene, "createDocument", ["title": "Plan"]).errorCode == "forbidden")

        harness.clock.advance(Self.hour)
        #expect(harness.run(.tick).closes(scene).isEmpty, "the old expiry no longer closes the scene")
        harness.clock.advance(Self.hour / 2 + Millis(Self.skew))
        #expect(harness.run(.tick).closes(scene) == [.tokenExpired])
    }

    @Test func aRefusedRefreshChangesNothing() {
        var harness = Self.harness()
        let (scene, _) = connect(&harness, token: "alice-editor")
        let otherUser = harness.request(scene, "refreshToken", ["token": "bob-editor"])
        #expect(otherUser.errorCode == "forbidden")
        #expect(otherUser["error"]?["field"] == "token")
        #expect(harness.request(scene, "refreshToken", ["token": "alice-elsewhere"]).errorCode == "not_a_member")
        #expect(harness.request(scene, "refreshToken", ["token": "alice-expired"]).errorCode == "token_expired")
        let forged = harness.request(scene, "refreshToken", ["token": "forged"])
        #expect(forged.errorCode == "unauthenticated" && forged["error"]?["field"] == "token")
        #expect(harness.request(scene, "refreshToken", [:]).errorCode == "missing_field")

        #expect(harness.request(scene, "createDocument", ["title": "Plan"])["ok"] == true, "still an editor")
        harness.clock.advance(Self.hour + Millis(Self.skew))
        #expect(harness.run(.tick).closes(scene) == [.tokenExpired], "still the first token's expiry")
    }

    @Test func aTokenOverMaxTokenBytesIsTooLargeNamingTheSetting() {
        var harness = Self.harness(maxTokenBytes: 256)
        let long = String(repeating: "x", count: 257)
        let atConnect = connect(&harness, token: long).1
        #expect(atConnect.errorCode == "too_large")
        #expect(atConnect["error"]?["message"]?.stringValue?.contains("maxTokenBytes") == true)
        let (scene, _) = connect(&harness, token: "alice-editor")
        #expect(harness.request(scene, "refreshToken", ["token": .string(long)]).errorCode == "too_large")
    }
}
