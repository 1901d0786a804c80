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
