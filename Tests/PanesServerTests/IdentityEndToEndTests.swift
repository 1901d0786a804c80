import Foundation
import PanesCore
import PanesJSON
import PanesSecurityTestSupport
import PanesServerTestSupport
import Testing

/// Identities are their bytes, over real sockets, in every auth mode and on both stores, before
/// and after a restart (issue 26, item 4): two users whose ids are canonically equivalent but
/// differ in bytes (NFC `josé` and NFD `jose` + U+0301; U+2126 OHM SIGN and U+03A9) never see
/// each other's sessions, switcher, preferences or drags, and a workspace grant opens only the
/// workspace whose bytes it names.
@Suite struct IdentityEndToEndTests {
    enum Mode: String, CaseIterable, CustomStringConvertible, Sendable {
        case open, tokens, jwt
        var description: String { rawValue }
    }

    struct Case: CustomStringConvertible, Sendable {
        let mode: Mode
        let store: TestStore
        let pair: Int
        var description: String { "\(mode) on \(store), pair \(pair)" }
    }

    static let pairs = [("jos\u{E9}", "jose\u{301}"), ("\u{2126}mega", "\u{3A9}mega")]

    static var cases: [Case] {
        Mode.allCases.flatMap { mode in
            TestStore.endToEnd.flatMap { store in pairs.indices.map { Case(mode: mode, store: store, pair: $0) } }
        }
    }

    /// A server in `mode` and what a connect of each of the two users sends as `auth`.
    struct Setup {
        let extra: [String]
        let first: JSONValue
        let second: JSONValue
        /// The user ids the server reports for each.
        let firstUser: String
        let secondUser: String
        let folder: URL
    }

    static func setup(_ mode: Mode, pair: Int) throws -> Setup {
        let (one, other) = pairs[pair]
        let folder = ServerProcess.tempFolder()
        switch mode {
        case .open:
            return Setup(extra: [], first: ["name": .string(one)], second: ["name": .string(other)],
                         firstUser: one, secondUser: other, folder: folder)
        case .tokens:
            // User ids in a tokens file are plain names; the tokens themselves are any text.
            let file = folder.appendingPathComponent("tokens.json")
            try Data(JSONCodec.encode(["tokens": [
                ["token": .string("t-" + one), "user": "alice", "workspaces": ["team": "editor", "Kteam": "owner"]],
                ["token": .string("t-" + other), "user": "bob", "workspaces": ["team": "editor"]],
                ["token": "kelvin", "user": "mallory", "workspaces": ["\u{212A}team": "owner"]],
            ]])).write(to: file)
            return Setup(extra: ["--auth", "tokens", "--tokens", file.path], first: ["token": .string("t-" + one)],
                         second: ["token": .string("t-" + other)], firstUser: "alice", secondUser: "bob", folder: folder)
        case .jwt:
            let file = folder.appendingPathComponent("jwt-keys.json")
            try Data(JSONCodec.encode(TokenSigner.keyFile([["kid": "hs-1", "alg": "HS256", "secret": .string(TestKeys.secret)]])))
                .write(to: file)
            return Setup(extra: ["--auth", "jwt", "--jwt-keys", file.path], first: ["token": .string(jwt(one))],
                         second: ["token": .string(jwt(other))], firstUser: one, secondUser: other, folder: folder)
        }
    }

    static func jwt(_ user: String, workspaces: [String: String] = ["team": "editor", "Kteam": "owner"]) -> String {
        let now = Millis(Date().timeIntervalSince1970 * 1000)
        return TokenSigner.sign(TokenSigner.claims(now: now, user: user, name: "Someone", workspaces: workspaces),
                                algorithm: "HS256", key: TestKeys.secret, kid: "hs-1")
    }

    static func connect(_ client: TestClient, _ auth: JSONValue, session: JSONValue? = nil,
                        workspace: String = "team") -> JSONValue {
        var fields: JSONObject = ["protocol": 1, "workspace": .string(workspace), "auth": auth]
        if let session { fields["session"] = session }
        return client.request("connect", fields)
    }

    static func credentials(_ reply: JSONValue) -> JSONValue {
        ["id": reply["result"]?["session"]?["persistentIdentifier"] ?? .null,
         "secret": reply["result"]?["session"]?["secret"] ?? .null]
    }

    static func listed(_ client: TestClient) -> [JSONValue] {
        client.request("listSessions")["result"]?["sessions"]?.arrayValue?.map { $0["persistentIdentifier"] ?? .null } ?? []
    }

    static func fontSize(_ client: TestClient) -> JSONValue? {
        _ = client.request("observe", ["domain": "user", "keyPath": "editor.fontSize", "options": ["initial"]])
        return client.event("preferenceChanged")?["new"]
    }

    @Test(arguments: cases)
    func usersWhoseIdsDifferOnlyInBytesShareNothingBeforeOrAfterARestart(_ test: Case) throws {
        let setup = try Self.setup(test.mode, pair: test.pair)
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let server = try ServerProcess(store: test.store, extra: setup.extra)

        let a = try server.client()
        let replyA = Self.connect(a, setup.first)
        #expect(replyA["result"]?["user"]?["id"] == .string(setup.firstUser), "\(replyA)")
        let sessionA = Self.credentials(replyA)
        #expect(a.request("setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 21])["ok"] == true)
        let drag = a.request("beginDrag", ["items": [["activity": ["activityType": "panes.document", "title": "Notes"]]]])
        let dragID = drag["result"]?["drag"] ?? .null

        let b = try server.client()
        let replyB = Self.connect(b, setup.second)
        #expect(replyB["result"]?["user"]?["id"] == .string(setup.secondUser), "\(replyB)")
        #expect(replyB["result"]?["created"] == true)
        #expect(Self.listed(b) == [Self.credentials(replyB)["id"]!], "the switcher lists only the second user's own window")
        #expect(Self.listed(a) == [sessionA["id"]!])
        #expect(Self.fontSize(b) == 15, "the default: the first user's 21 is theirs alone")
        #expect(b.request("drop", ["drag": dragID, "target": "scene", "operation": "copy"])["error"]?["code"] == "forbidden")
        #expect(Self.connect(try server.client(), setup.second, session: sessionA)["error"]?["code"] == "session_not_found")

        // A clean stop (on PostgreSQL a killed node's sessions stay claimed for its lease).
        server.kill(SIGTERM)
        #expect(server.wait() == 0)
        let restarted = try server.restarted(extra: setup.extra)
        let backA = try restarted.client()
        let resumed = Self.connect(backA, setup.first, session: sessionA)
        #expect(resumed["result"]?["created"] == false, "\(resumed)")
        #expect(resumed["result"]?["user"]?["id"] == .string(setup.firstUser))
        #expect(Self.connect(try restarted.client(), setup.second, session: sessionA)["error"]?["code"] == "session_not_found")
        let backB = try restarted.client()
        #expect(Self.connect(backB, setup.second, session: Self.credentials(replyB))["result"]?["created"] == false)
        #expect(Self.listed(backB) == [Self.credentials(replyB)["id"]!])
        #expect(Self.listed(backA) == [sessionA["id"]!])
        #expect(Self.fontSize(backB) == 15)
        #expect(Self.fontSize(backA) == 21)
    }

    /// KELVIN SIGN normalises to `K`: a grant for `\u{212A}team` (a workspace nobody can
    /// connect to, since names are ASCII) must not open `Kteam` and its documents.
    @Test(arguments: [Mode.tokens, .jwt])
    func aWorkspaceGrantOpensOnlyTheWorkspaceWhoseBytesItNames(_ mode: Mode) throws {
        let setup = try Self.setup(mode, pair: 0)
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let server = try ServerProcess(extra: setup.extra)
        let owner = try server.client()
        #expect(Self.connect(owner, setup.first, workspace: "Kteam")["ok"] == true)
        #expect(owner.request("createDocument", ["title": "Salaries"])["ok"] == true)

        let mallory: JSONValue = mode == .tokens ? ["token": "kelvin"]
            : ["token": .string(Self.jwt("mallory", workspaces: ["\u{212A}team": "owner"]))]
        let refused = Self.connect(try server.client(), mallory, workspace: "Kteam")
        #expect(refused["error"]?["code"] == "not_a_member", "\(refused)")
    }
}
