import PanesCore
import Testing

/// Keys found by the hash of their secret, held to their workspaces, access and rate.
@Suite struct APIGateTests {

    static func keyring() throws -> APIKeyring {
        try APIKeyring(json: ["keys": [
            ["id": "w", "sha256": .string(String(repeating: "a", count: 63) + "b"), "workspaces": ["acme"], "access": "write"],
            ["id": "r", "sha256": .string(String(repeating: "a", count: 62) + "bb"), "workspaces": ["*"]],
        ]])
    }

    static func route(_ method: String, _ workspace: String = "acme") throws -> APIRoute {
        try APIRoute(method: method, path: "/api/v1/workspaces/\(workspace)/documents", query: [],
                     body: method == "POST" ? ["title": "t"] : nil, idempotencyKey: nil, newOpId: "x")
    }

    /// A hash that maps secret "1" to the writer's and "11" to the reader's.
    static let fakeHash: @Sendable (String) -> String = { secret in
        String(repeating: "a", count: 64 - secret.count) + String(repeating: "b", count: secret.count)
    }

    @Test func keysAreCheckedForPresenceWorkspaceAccessAndRate() throws {
        var settings = Settings()
        settings.apiRateLimitPerSecond = 1
        settings.apiRateLimitBurst = 2
        var gate = APIGate(keyring: try Self.keyring(), settings: settings, hash: Self.fakeHash)
        func code(_ authorization: String?, _ route: APIRoute, at now: Millis = 0) -> ErrorCode? {
            do throws(PanesError) {
                _ = try gate.admit(authorization: authorization, route: route, now: now)
                return nil
            } catch {
                return error.code
            }
        }
        #expect(code(nil, try Self.route("GET")) == .unauthenticated)
        #expect(code("Basic 1", try Self.route("GET")) == .unauthenticated)
        #expect(code("Bearer 111", try Self.route("GET")) == .unauthenticated)
        #expect(code("Bearer 1", try Self.route("POST")) == nil)
        #expect(code("Bearer 1", try Self.route("GET", "other")) == .forbidden)
        #expect(code("bearer 11", try Self.route("GET", "other")) == nil)
        #expect(code("Bearer 11", try Self.route("POST")) == .forbidden)
        // The writer's burst of 2 is spent by its next request; the reader's bucket is its own.
        #expect(code("Bearer 1", try Self.route("GET")) == nil)
        #expect(code("Bearer 1", try Self.route("GET")) == .rateLimited)
        #expect(code("Bearer 1", try Self.route("GET"), at: 1_000) == nil)
        // Revoked: the key is gone from the file read again.
        gate.replace(APIKeyring(try Self.keyring().keys.filter { $0.id != "w" }))
        #expect(code("Bearer 1", try Self.route("GET"), at: 5_000) == .unauthenticated)
    }

    /// Tokens by their text, for a gate that takes JWTs: `verify` finds them here.
    static let tokens: [String: VerifiedToken] = [
        "svc.write.1": VerifiedToken(user: "crm", name: "CRM", workspaces: [:], expiresAt: nil,
                                     service: APIScope(workspaces: ["acme"], access: .write)),
        "svc.read.1": VerifiedToken(user: "bi", name: "BI", workspaces: [:], expiresAt: nil,
                                    service: APIScope(workspaces: ["*"], access: .read)),
        "bob.viewer.1": VerifiedToken(user: "bob", name: "Bob", workspaces: ["acme": .viewer], expiresAt: nil),
        "bob.viewer.2": VerifiedToken(user: "bob", name: "Bob", workspaces: ["acme": .viewer], expiresAt: nil),
        // Canonically equivalent, different bytes: two subjects (NFC and NFD `josé`).
        "jose.nfc.1": VerifiedToken(user: "jos\u{E9}", name: "José", workspaces: ["acme": .editor], expiresAt: nil),
        "jose.nfd.1": VerifiedToken(user: "jose\u{301}", name: "José", workspaces: ["acme": .editor], expiresAt: nil),
    ]

    static let check: @Sendable (String) throws(PanesError) -> VerifiedToken = { token throws(PanesError) in
        guard let verified = tokens[token] else { throw PanesError(.unauthenticated, "the token is not valid") }
        return verified
    }

    @Test func aServiceTokenIsTheBackendAndAUsersTokenActsAsThatUserOnly() throws {
        var gate = APIGate(keyring: try Self.keyring(), settings: Settings(), hash: Self.fakeHash)
        var refusal: PanesError?
        func admit(_ token: String, _ route: APIRoute, verify: Bool = true) -> (principal: APIPrincipal, role: Role)? {
            do throws(PanesError) {
                refusal = nil
                var check: ((String) throws(PanesError) -> VerifiedToken)?
                if verify { check = Self.check }
                return try gate.admit(authorization: "Bearer \(token)", route: route, now: 0, verify: check)
            } catch {
                refusal = error
                return nil
            }
        }
        func sessions(_ user: String) throws -> APIRoute {
            try APIRoute(method: "GET", path: "/api/v1/workspaces/acme/users/\(user)/sessions", query: [], body: nil,
                         idempotencyKey: nil, newOpId: "x")
        }
        let writer = admit("svc.write.1", try Self.route("POST"))
        #expect(writer?.principal.actor == "service:crm" && writer?.role == .owner)
        #expect(admit("svc.write.1", try Self.route("GET", "other")) == nil && refusal?.code == .forbidden)
        #expect(admit("svc.read.1", try Self.route("GET", "other"))?.role == .owner)
        #expect(admit("svc.read.1", try Self.route("POST")) == nil && refusal?.code == .forbidden)
        // A user's token: the user's role; the hub decides what a viewer may do with it.
        let bob = admit("bob.viewer.1", try Self.route("POST"))
        #expect(bob?.principal.actor == "bob" && bob?.role == .viewer && bob?.principal.scope == nil)
        #expect(admit("bob.viewer.1", try sessions("bob"))?.role == .viewer)
        #expect(admit("bob.viewer.1", try sessions("alice")) == nil && refusal?.code == .forbidden)
        #expect(admit("bob.viewer.1", try Self.route("GET", "other")) == nil && refusal?.code == .notAMember)
        #expect(admit("bob.viewer.9", try Self.route("GET")) == nil && refusal?.code == .unauthenticated)
        // A server without `--auth jwt` says so rather than calling a token an unknown key.
        #expect(admit("bob.viewer.1", try Self.route("GET"), verify: false) == nil)
        #expect(refusal?.code == .unauthenticated && refusal?.message.contains("--auth jwt") == true)
    }

    @Test func everyTokenOfOneSubjectSharesItsBudgetAndANodeAdmitsItsShareOfTheCluster() throws {
        var settings = Settings()
        settings.apiRateLimitPerSecond = 2
        settings.apiRateLimitBurst = 4
        var gate = APIGate(keyring: try Self.keyring(), settings: settings, hash: Self.fakeHash)
        func admitted(_ secret: String, count: Int, at now: Millis) -> Int {
            (0..<count).count { _ in
                (try? gate.admit(authorization: "Bearer \(secret)", route: try Self.route("GET"), now: now,
                                 verify: Self.check)) != nil
            }
        }
        #expect(admitted("bob.viewer.1", count: 3, at: 0) == 3)
        #expect(admitted("bob.viewer.2", count: 3, at: 0) == 1)  // the same `sub`: one budget
        #expect(admitted("svc.read.1", count: 5, at: 0) == 4)  // another subject: its own
        #expect(admitted("jose.nfc.1", count: 5, at: 0) == 4)
        #expect(admitted("jose.nfd.1", count: 5, at: 0) == 4)  // subjects compared by their bytes
        // Two live nodes: each admits half the burst and half the rate.
        gate.setNodes(2)
        #expect(admitted("1", count: 5, at: 10_000) == 2)
        #expect(admitted("1", count: 5, at: 11_000) == 1)  // 1 a second here, 2 across both nodes
        #expect(admitted("bob.viewer.1", count: 5, at: 20_000) == 2)  // a full bucket shrinks to the share
        gate.setNodes(1)
        #expect(admitted("1", count: 5, at: 30_000) == 4)
    }

    @Test func aKeysFileWithMistakesIsRefusedNamingTheField() {
        let bad: [(JSONValue, String)] = [
            (["keys": [["id": "w", "sha256": "abc", "workspaces": ["acme"]]]], "keys[0].sha256"),
            (["keys": [["id": "w x", "sha256": .string(String(repeating: "a", count: 64)), "workspaces": ["acme"]]]], "keys[0].id"),
            (["keys": [["id": "w", "sha256": .string(String(repeating: "a", count: 64)), "workspaces": []]]], "keys[0].workspaces"),
            (["keys": [["id": "w", "sha256": .string(String(repeating: "a", count: 64)), "workspaces": ["a"], "access": "all"]]],
             "keys[0].access"),
            (["keys": [["id": "w", "sha256": .string(String(repeating: "a", count: 64)), "workspaces": ["a"]],
                       ["id": "w", "sha256": .string(String(repeating: "b", count: 64)), "workspaces": ["a"]]]], "keys[1].id"),
        ]
        for (json, field) in bad {
            do {
                _ = try APIKeyring(json: json)
                Issue.record("accepted: \(json)")
            } catch {
                #expect(error.field == field)
            }
        }
    }
}
