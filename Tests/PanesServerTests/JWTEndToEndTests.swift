import Foundation
import PanesCore
import PanesJSON
import PanesSecurityTestSupport
import PanesServerTestSupport
import PanesTransport
import Testing

/// `panes serve --auth jwt` over real sockets (issue 13, item 5): tokens an application signs
/// connect as their user with their role, the known attacks are refused, an expiring token
/// closes its scene with 4010 unless `refreshToken` replaced it.
@Suite struct JWTEndToEndTests {
    /// A folder with a key file (an HS256 secret and an RS256 public key) and a server using it.
    static func server(settings: JSONValue = [:]) throws -> ServerProcess {
        let keys = ServerProcess.tempFolder()
        try TestKeys.rsa.publicPEM.write(to: keys.appendingPathComponent("rsa.pub.pem"), atomically: true, encoding: .utf8)
        let file = keys.appendingPathComponent("jwt-keys.json")
        try Data(JSONCodec.encode(TokenSigner.keyFile([
            ["kid": "hs-1", "alg": "HS256", "secret": .string(TestKeys.secret)],
            ["kid": "rs-1", "alg": "RS256", "publicKeyFile": "rsa.pub.pem"],
        ]))).write(to: file)
        return try ServerProcess(config: ["settings": settings], extra: ["--auth", "jwt", "--jwt-keys", file.path])
    }

    static var now: Millis { Millis(Date().timeIntervalSince1970 * 1000) }

    static func token(user: String = "alice", workspaces: [String: String] = ["team": "editor"],
                      expiresIn seconds: Int64 = 3600, overrides: JSONObject = [:]) -> String {
        var overrides = overrides
        overrides["exp"] = overrides["exp"] ?? .int(now / 1000 + seconds)
        let claims = TokenSigner.claims(now: now, user: user, name: user.capitalized, workspaces: workspaces,
                                        overrides: overrides)
        return TokenSigner.sign(claims, algorithm: "RS256", key: TestKeys.rsa.privatePEM, kid: "rs-1")
    }

    func connect(_ client: TestClient, _ token: String, workspace: String = "team") -> JSONValue {
        client.request("connect", ["protocol": 1, "workspace": .string(workspace), "auth": ["token": .string(token)]])
    }

    @Test func aSignedTokenConnectsAsItsUserWithItsRoleAndSaysWhenItExpires() throws {
        let server = try Self.server()
        let exp = Self.now / 1000 + 3600
        let reply = connect(try server.client(), Self.token(overrides: ["exp": .int(exp)]))
        #expect(reply["result"]?["user"] == ["id": "alice", "name": "Alice", "role": "editor"])
        #expect(reply["result"]?["auth"]?["expiresAt"] == .int(exp * 1000))

        let hs256 = TokenSigner.sign(TokenSigner.claims(now: Self.now, user: "bob", workspaces: ["team": "viewer"]),
                                     algorithm: "HS256", key: TestKeys.secret, kid: "hs-1")
        #expect(connect(try server.client(), hs256)["result"]?["user"]?["role"] == "viewer", "a second key, for rotation")
    }

    @Test func theKnownAttacksAreRefusedOverTheWire() throws {
        let server = try Self.server()
        let claims = TokenSigner.claims(now: Self.now, user: "mallory", workspaces: ["team": "owner"])
        let attacks: [(String, String)] = [
            (TokenSigner.assemble(header: ["alg": "none", "typ": "JWT", "kid": "rs-1"], claims: claims), "unauthenticated"),
            (TokenSigner.sign(claims, algorithm: "HS256", key: TestKeys.rsa.publicPEM, kid: "rs-1"), "unauthenticated"),
            (TokenSigner.sign(claims, algorithm: "RS256", key: TestKeys.otherRSA.privatePEM, kid: "rs-1"), "unauthenticated"),
            (TokenSigner.replacingClaims(of: Self.token(), with: claims), "unauthenticated"),
            (Self.token(overrides: ["aud": "another-service"]), "unauthenticated"),
            (Self.token(overrides: ["iss": "https://evil.test"]), "unauthenticated"),
            (Self.token(overrides: ["nbf": .int(Self.now / 1000 + 3600)]), "unauthenticated"),
            (Self.token(expiresIn: -3600), "token_expired"),
            (Self.token(workspaces: ["elsewhere": "owner"]), "not_a_member"),
        ]
        for (token, code) in attacks {
            let reply = connect(try server.client(), token)
            #expect(reply["error"]?["code"] == .string(code), "\(reply)")
        }
        let byName = try server.client().request("connect", ["protocol": 1, "workspace": "team", "auth": ["name": "mallory"]])
        #expect(byName["error"]?["code"] == "unauthenticated")
    }

    @Test func aViewersTokenCannotWriteAndRefreshingAppliesTheNewRole() throws {
        let server = try Self.server()
        let tab = try server.client()
        #expect(connect(tab, Self.token(workspaces: ["team": "viewer"]))["ok"] == true)
        #expect(tab.request("createDocument", ["title": "Plan"])["error"]?["code"] == "forbidden")

        let exp = Self.now / 1000 + 7200
        let refreshed = tab.request("refreshToken", ["token": .string(Self.token(overrides: ["exp": .int(exp)]))])
        #expect(refreshed["result"]?["auth"]?["expiresAt"] == .int(exp * 1000))
        #expect(refreshed["result"]?["user"]?["role"] == "editor")
        #expect(tab.request("createDocument", ["title": "Plan"])["ok"] == true)
        #expect(tab.request("refreshToken", ["token": .string(Self.token(user: "bob"))])["error"]?["code"] == "forbidden")
    }

    @Test func anExpiringTokenClosesItsSceneWith4010UnlessRefreshed() throws {
        let server = try Self.server(settings: ["jwtClockSkewMs": 0])
        let expiring = try server.client()
        let refreshing = try server.client()
        let soon = Self.token(expiresIn: 2)
        #expect(connect(expiring, soon)["ok"] == true)
        #expect(connect(refreshing, soon)["ok"] == true)
        #expect(refreshing.request("refreshToken", ["token": .string(Self.token())])["ok"] == true)

        #expect(expiring.waitForClose(timeout: 15) == CloseCode.tokenExpired.rawValue)
        // Both tokens expired at the same tick; the refreshed scene was not closed with the other.
        #expect(refreshing.request("ping")["ok"] == true)
    }

    @Test func serveRefusesJWTWithoutAUsableKeyFile() throws {
        let (missing, missingErrors) = try ServerProcess.runToExit(["serve", "--port", "0", "--store", "memory", "--auth", "jwt"])
        #expect(missing != 0 && missingErrors.contains("--jwt-keys"), "\(missingErrors)")

        let folder = ServerProcess.tempFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("keys.json")
        try Data(JSONCodec.encode(TokenSigner.keyFile([["kid": "k", "alg": "HS256", "secret": "short"]]))).write(to: file)
        let (weak, weakErrors) = try ServerProcess.runToExit(["serve", "--port", "0", "--store", "memory",
                                                              "--auth", "jwt", "--jwt-keys", file.path])
        #expect(weak != 0 && weakErrors.contains("at least 32"), "\(weakErrors)")

        let (ignored, ignoredErrors) = try ServerProcess.runToExit(["serve", "--port", "0", "--store", "memory",
                                                                    "--jwt-keys", file.path])
        #expect(ignored != 0 && ignoredErrors.contains("only used with --auth jwt"), "\(ignoredErrors)")
    }
}
