import Foundation
import PanesCore
import PanesJSON
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// Every state-changing request, sent with an `idempotencyKey` and retried after its reply was
/// lost (the socket closed before it came, or the server was killed right after the request
/// arrived), against the real binary on both stores: applied once, and the retry answered as
/// the first attempt was.
@Suite struct RetryEndToEndTests {
    /// One write type: how to set it up, the request, and how to count its effect afterwards.
    struct Write: Sendable, CustomStringConvertible {
        let type: String
        /// Run once on a connected client before the write; returns the request's fields.
        let prepare: @Sendable (TestClient) -> JSONObject
        /// How many times the write's effect is there, read on a connected client.
        let count: @Sendable (TestClient, JSONObject) -> Int
        var description: String { type }
    }

    static func sessions(_ client: TestClient) -> [JSONValue] {
        client.request("listSessions")["result"]?["sessions"]?.arrayValue ?? []
    }

    static func documents(_ client: TestClient, titled title: String) -> Int {
        let list = client.request("observeDocuments")["result"]?["documents"]?.arrayValue ?? []
        _ = client.request("unobserveDocuments")
        return list.count { $0["title"] == .string(title) }
    }

    static let writes: [Write] = [
        Write(type: "setUserInfo", prepare: { _ in ["userInfo": ["n": 1], "mode": "merge"] },
              count: { client, _ in
                  // Applied once, then changed by a later request: the retry must not undo that.
                  _ = client.request("setUserInfo", ["userInfo": ["n": 2], "mode": "merge"])
                  return 1
              }),
        Write(type: "updateActivity", prepare: { _ in ["activity": ["activityType": "panes.document", "title": "Kept"]] },
              count: { _, _ in 1 }),
        Write(type: "setPreference", prepare: { _ in ["domain": "user", "keyPath": "editor.fontSize", "value": 18, "ifVersion": 0] },
              count: { client, _ in
                  let observed = client.request("observe", ["domain": "user", "keyPath": "editor.fontSize",
                                                              "options": ["initial", "new"]])
                  _ = observed
                  let event = client.event("preferenceChanged")
                  return event?["version"] == 1 ? 1 : 0
              }),
        Write(type: "removePreference", prepare: { client in
                  _ = client.request("setPreference", ["domain": "user", "keyPath": "editor.theme", "value": "dark"])
                  return ["domain": "user", "keyPath": "editor.theme", "ifVersion": 1]
              },
              count: { client, _ in
                  _ = client.request("observe", ["domain": "user", "keyPath": "editor.theme", "options": ["initial"]])
                  return client.event("preferenceChanged")?["version"] == 0 ? 1 : 0
              }),
        Write(type: "createDocument", prepare: { _ in ["title": "Once"] },
              count: { client, _ in documents(client, titled: "Once") }),
        Write(type: "renameDocument", prepare: { client in
                  let id = client.request("createDocument", ["title": "Before"])["result"]?["document"]?["id"] ?? .null
                  return ["document": id, "title": "After"]
              },
              count: { client, _ in documents(client, titled: "After") }),
        Write(type: "deleteDocument", prepare: { client in
                  let id = client.request("createDocument", ["title": "Doomed"])["result"]?["document"]?["id"] ?? .null
                  return ["document": id]
              },
              count: { client, _ in 1 - documents(client, titled: "Doomed") }),
        Write(type: "requestActivation", prepare: { _ in
                  ["activity": ["activityType": "panes.document", "title": "Opened", "targetContentIdentifier": "doc_x"]]
              },
              count: { client, _ in sessions(client).count { $0["title"] == "Opened" } }),
        Write(type: "requestRefresh", prepare: { client in
                  let session = client.request("requestActivation", ["activity": ["activityType": "panes.document"]])
                  return ["session": session["result"]?["session"] ?? .null, "title": "Refreshed"]
              },
              count: { client, _ in sessions(client).count { $0["title"] == "Refreshed" } }),
        Write(type: "requestDestruction", prepare: { client in
                  let session = client.request("requestActivation", ["activity": ["activityType": "panes.document"]])
                  return ["session": session["result"]?["session"] ?? .null]
              },
              count: { client, fields in 1 - sessions(client).count { $0["persistentIdentifier"] == fields["session"] } }),
        Write(type: "beginDrag", prepare: { _ in ["items": [["activity": ["activityType": "panes.document"]]]] },
              count: { _, _ in 1 }),
        Write(type: "drop", prepare: { client in
                  let drag = client.request("beginDrag", ["items": [["activity": ["activityType": "panes.document",
                                                                                  "title": "Dropped"]]]])
                  return ["drag": drag["result"]?["drag"] ?? .null, "target": "newWindow"]
              },
              count: { client, _ in sessions(client).count { $0["title"] == "Dropped" } }),
        Write(type: "cancelDrag", prepare: { client in
                  let drag = client.request("beginDrag", ["items": [["activity": ["activityType": "panes.document"]]]])
                  return ["drag": drag["result"]?["drag"] ?? .null]
              },
              count: { _, _ in 1 }),
    ]

    static var cases: [(TestStore, Write)] {
        TestStore.endToEnd.flatMap { store in writes.map { (store, $0) } }
    }

    static func frame(_ type: String, id: String, key: String, _ fields: JSONObject) -> String {
        var object = fields
        object["type"] = .string(type)
        object["id"] = .string(id)
        object["idempotencyKey"] = .string(key)
        return JSONCodec.encodeString(.object(object))
    }

    /// The first attempt's socket closes right behind the request: its reply never arrives.
    /// The client reconnects, resumes, and sends the request again with its key.
    @Test(arguments: cases)
    func aWriteRetriedAfterItsReplyWasLostIsAppliedOnceAndAnsweredOk(_ store: TestStore, _ write: Write) throws {
        let server = try ServerProcess(store: store)
        let first = try server.client()
        let created = first.connect()
        let fields = write.prepare(first)
        let key = "retry-\(write.type)-\(UUID().uuidString)"
        first.sendRaw(Self.frame(write.type, id: "lost", key: key, fields))
        first.socket.close()

        let second = try server.client()
        _ = second.connect(["session": TestClient.credentials(created)])
        var retry = fields
        retry["idempotencyKey"] = .string(key)
        let answer = second.request(write.type, retry)
        #expect(answer["ok"] == true, "\(write.type) retried: \(answer)")
        let again = second.request(write.type, retry)
        #expect(again["result"] == answer["result"], "every retry gets the same answer")
        #expect(write.count(second, fields) == 1, "\(write.type) applied once")
    }

    /// The server is killed right after the request arrived: it may have committed or not.
    /// After the restart, the retry is applied at most once, and answered.
    @Test(arguments: TestStore.endToEnd)
    func writesRetriedAfterTheServerWasKilledAroundTheirCommitAreAppliedOnce(_ store: TestStore) throws {
        // Every server is kept until the end: a released one removes the data folder they share.
        var servers = [try ServerProcess(store: store)]
        var server = servers[0]
        var tab = try server.client()
        let created = tab.connect()
        for round in 0..<5 {
            let key = "killed-\(round)"
            tab.sendRaw(Self.frame("createDocument", id: "c\(round)", key: key, ["title": .string("Killed \(round)")]))
            // Sometimes before, sometimes after its commit.
            if round % 2 == 1 { _ = tab.next { $0["re"] == .string("c\(round)") } }
            server.kill(SIGKILL)
            server.wait()
            server = try server.restarted()
            servers.append(server)
            tab = try server.client()
            _ = tab.connect(["session": TestClient.credentials(created)])
            let retry = tab.request("createDocument", ["title": .string("Killed \(round)"), "idempotencyKey": .string(key)])
            #expect(retry["ok"] == true)
            #expect(Self.documents(tab, titled: "Killed \(round)") == 1, "round \(round)")
        }
        withExtendedLifetime(servers) {}
    }

    @Test(arguments: TestStore.endToEnd)
    func aRetriedConnectThatCreatedASessionAttachesThatSession(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let first = try server.client()
        first.sendRaw(#"{"type":"connect","id":1,"protocol":1,"auth":{"name":"carol"},"idempotencyKey":"hello-1"}"#)
        first.socket.close()
        let second = try server.client()
        let attached = second.request("connect", ["protocol": 1, "auth": ["name": "carol"], "idempotencyKey": "hello-1"])
        #expect(attached["ok"] == true)
        #expect(attached["result"]?["created"] == true)
        #expect(Self.sessions(second).count == 1, "one session, not two")
        #expect(Self.sessions(second).first?["persistentIdentifier"] == attached["result"]?["session"]?["persistentIdentifier"])
    }

    @Test(arguments: TestStore.endToEnd)
    func theSameKeyOnAnotherRequestIsRefusedAndNothingChanges(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let tab = try server.client()
        _ = tab.connect()
        #expect(tab.request("createDocument", ["title": "One", "idempotencyKey": "same"])["ok"] == true)
        let reused = tab.request("createDocument", ["title": "Two", "idempotencyKey": "same"])
        #expect(reused["error"]?["code"] == "idempotency_key_reused")
        #expect(reused["error"]?["field"] == "idempotencyKey")
        #expect(Self.documents(tab, titled: "Two") == 0)
    }
}
