import Foundation
import PanesCore
import PanesJSON
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// Documents through the real binary over real sockets: concurrent editing, durability
/// across SIGKILL, catch-up, resends, roles, deletion, and unloading.
@Suite struct DocumentsEndToEndTests {
    /// Creates a document and returns its id.
    static func create(_ client: TestClient, title: String = "Plan", text: String = "") -> String {
        let reply = client.request("createDocument", ["title": .string(title), "text": .string(text)])
        #expect(reply["ok"] == true, "createDocument failed: \(reply)")
        return reply["result"]?["document"]?["id"]?.stringValue ?? ""
    }

    static func open(_ client: TestClient, _ id: String, revision: Int64? = nil) -> JSONValue {
        var fields: JSONObject = ["document": .string(id)]
        if let revision { fields["revision"] = .int(revision) }
        return client.request("openDocument", fields)
    }

    /// The value of a gauge in `/metrics`.
    static func gauge(_ server: ServerProcess, _ name: String) throws -> Int? {
        let body = try server.http("/metrics").body
        for line in body.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Int(line.dropFirst(name.count + 1))
        }
        return nil
    }

    @Test(arguments: TestStore.endToEnd) func twoClientsEditingAtOnceConvergeOnOneText(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let alice = try server.client(), bob = try server.client(), observer = try server.client()
        _ = alice.connect(name: "alice")
        _ = bob.connect(name: "bob")
        _ = observer.connect(name: "olga")
        let id = Self.create(alice, text: "|")
        for client in [alice, bob, observer] { #expect(Self.open(client, id)["result"]?["revision"] == 0) }

        // Every edit is made on revision 0 and sent without waiting: the server must transform
        // each past all the others. Alice inserts before the bar, Bob after it.
        let rounds = 25
        for round in 0..<rounds {
            alice.sendRaw(JSONCodec.encodeString(["type": "edit", "id": .string("a\(round)"), "document": .string(id),
                                                  "revision": 0, "operation": ["a😀", 1], "opId": .string("alice:\(round)")]))
            bob.sendRaw(JSONCodec.encodeString(["type": "edit", "id": .string("b\(round)"), "document": .string(id),
                                                "revision": 0, "operation": [1, "b\u{301}"], "opId": .string("bob:\(round)")]))
        }
        var revisions: Set<Int64> = []
        for (client, prefix) in [(alice, "a"), (bob, "b")] {
            for round in 0..<rounds {
                let reply = client.next { $0["re"] == .string("\(prefix)\(round)") }
                #expect(reply?["ok"] == true, "\(prefix)\(round): \(String(describing: reply))")
                if let revision = reply?["result"]?["revision"]?.intValue { revisions.insert(revision) }
            }
        }
        #expect(revisions == Set(1...Int64(2 * rounds)))

        // The observer applies the server's operations in order and ends where a fresh open does.
        var text = "|"
        for expected in 1...Int64(2 * rounds) {
            let event = try #require(observer.event("documentOperation"))
            #expect(event["revision"]?.intValue == expected)
            text = try TextOperation(json: event["operation"] ?? .null).apply(to: text)
        }
        let fresh = try server.client()
        _ = fresh.connect(name: "fresh")
        let final = Self.open(fresh, id)["result"]?["text"]?.stringValue ?? ""
        #expect(final.unicodeScalars.elementsEqual(text.unicodeScalars))
        #expect(final.unicodeScalars.elementsEqual(
            (String(repeating: "a😀", count: rounds) + "|" + String(repeating: "b\u{301}", count: rounds)).unicodeScalars))
    }

    @Test(arguments: TestStore.endToEnd) func anAcknowledgedOperationSurvivesSIGKILL(_ store: TestStore) throws {
        // Snapshots every 7 operations, so the restart rebuilds from a snapshot plus a log.
        let server = try ServerProcess(store: store, config: ["settings": ["snapshotEvery": 7]])
        let tab = try server.client()
        _ = tab.connect()
        let id = Self.create(tab, title: "Durable")
        _ = Self.open(tab, id)
        var acknowledged: Int64 = 0
        for step in 0..<40 {
            let reply = tab.request("edit", ["document": .string(id), "revision": .int(acknowledged),
                                             "operation": step == 0 ? ["𝄞"] : [.int(Int64(step)), "𝄞"],
                                             "opId": .string("tab:\(step)")])
            guard reply["ok"] == true else { break }
            acknowledged = reply["result"]?["revision"]?.intValue ?? -1
        }
        server.kill(SIGKILL)
        server.wait()
        #expect(acknowledged == 40)

        let restarted = try server.restarted()
        let again = try restarted.client()
        _ = again.connect()
        let listed = again.request("observeDocuments")["result"]?["documents"]?.arrayValue?.first
        #expect(listed?["title"] == "Durable")
        #expect(listed?["revision"] == .int(acknowledged))
        let opened = Self.open(again, id)["result"]
        #expect(opened?["revision"] == .int(acknowledged))
        #expect(opened?["text"] == .string(String(repeating: "𝄞", count: 40)))
    }

    @Test(arguments: TestStore.endToEnd) func reopeningFromARevisionGetsExactlyTheMissingOperations(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let writer = try server.client(), reader = try server.client()
        _ = writer.connect(name: "writer")
        let credentials = TestClient.credentials(reader.connect(name: "reader"))
        let id = Self.create(writer, text: "0")
        _ = Self.open(writer, id)
        _ = Self.open(reader, id)
        for revision in 0..<2 {
            _ = writer.request("edit", ["document": .string(id), "revision": .int(Int64(revision)),
                                        "operation": [.int(Int64(revision + 1)), "x"], "opId": .string("w:\(revision)")])
        }
        reader.socket.close()

        for revision in 2..<6 {
            _ = writer.request("edit", ["document": .string(id), "revision": .int(Int64(revision)),
                                        "operation": [.int(Int64(revision + 1)), "y"], "opId": .string("w:\(revision)")])
        }
        let back = try server.client()
        _ = back.connect(["session": credentials], name: "reader")
        let result = Self.open(back, id, revision: 2)["result"]
        #expect(result?["catchUp"] == "operations")
        #expect(result?["revision"] == 6)
        let operations = result?["operations"]?.arrayValue ?? []
        #expect(operations.map { $0["revision"] } == [3, 4, 5, 6])
        #expect(operations.map { $0["opId"] } == ["w:2", "w:3", "w:4", "w:5"])
        #expect(operations.map { $0["operation"] } == [[3, "y"], [4, "y"], [5, "y"], [6, "y"]])
        #expect(Self.open(back, id, revision: 6)["result"]?["catchUp"] == "none")
        #expect(Self.open(back, id, revision: 7).errorCode == "revision_in_future")
    }

    @Test(arguments: TestStore.endToEnd) func aResentOperationIsNotAppliedTwice(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let tab = try server.client()
        let credentials = TestClient.credentials(tab.connect())
        let id = Self.create(tab, text: "ab")
        _ = Self.open(tab, id)
        let edit: JSONObject = ["document": .string(id), "revision": 0, "operation": [1, "🙂", 1],
                                         "opId": "3f0c:17"]
        #expect(tab.request("edit", edit)["result"] == ["revision": 1, "opId": "3f0c:17"])
        tab.socket.close()

        // After a reconnect, the client resends before reading the catch-up.
        let again = try server.client()
        _ = again.connect(["session": credentials])
        #expect(Self.open(again, id, revision: 0)["result"]?["operations"]?.arrayValue?.first?["opId"] == "3f0c:17")
        #expect(again.request("edit", edit)["result"] == ["revision": 1, "opId": "3f0c:17", "duplicate": true])
        let opened = Self.open(again, id)["result"]
        #expect(opened?["text"] == "a🙂b")
        #expect(opened?["revision"] == 1)
    }

    @Test(arguments: TestStore.endToEnd) func aViewerCanReadButNotEdit(_ store: TestStore) throws {
        let folder = ServerProcess.tempFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let tokens = folder.appendingPathComponent("tokens.json")
        try Data(JSONCodec.encode(["tokens": [
            ["token": "t-ed", "user": "ed", "name": "Ed", "workspaces": ["acme": "editor"]],
            ["token": "t-vic", "user": "vic", "name": "Vic", "workspaces": ["acme": "viewer"]],
        ]])).write(to: tokens)
        let server = try ServerProcess(store: store, extra: ["--auth", "tokens", "--tokens", tokens.path])
        let editor = try server.client(), viewer = try server.client()
        _ = editor.connect(["auth": ["token": "t-ed"], "workspace": "acme"])
        let connected = viewer.connect(["auth": ["token": "t-vic"], "workspace": "acme"])
        #expect(connected["user"]?["role"] == "viewer")
        let id = Self.create(editor, text: "read only")

        #expect(viewer.request("observeDocuments")["result"]?["documents"]?.arrayValue?.count == 1)
        #expect(Self.open(viewer, id)["result"]?["text"] == "read only")
        let refused = viewer.request("edit", ["document": .string(id), "revision": 0, "operation": [9, "!"], "opId": "v:1"])
        #expect(refused.errorCode == "forbidden")
        #expect(refused["error"]?["number"] == 3002)
        #expect(viewer.request("createDocument", ["title": "Mine"]).errorCode == "forbidden")
        #expect(viewer.request("deleteDocument", ["document": .string(id)]).errorCode == "forbidden")
        #expect(Self.open(editor, id)["result"]?["text"] == "read only")
    }

    @Test(arguments: TestStore.endToEnd) func deletingReachesTheOtherScenesAndClosesADedicatedWindow(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let tab = try server.client(), other = try server.client()
        _ = tab.connect()
        _ = other.connect(name: "bob")
        let id = Self.create(tab, title: "Compose")
        let activation = tab.request("requestActivation", ["activity": [
            "activityType": "panes.document.dedicated", "targetContentIdentifier": .string(id),
        ]])
        let window = try server.client()
        let windowSession = window.connect(["ticket": activation["result"]?["ticket"] ?? .null])
        #expect(windowSession["session"]?["configuration"] == "document")
        _ = Self.open(window, id)
        _ = Self.open(other, id)

        #expect(tab.request("deleteDocument", ["document": .string(id)])["result"] == ["document": .string(id)])
        #expect(other.event("documentDeleted")?["document"] == .string(id))
        #expect(window.event("documentDeleted")?["document"] == .string(id))
        let destroyed = window.event("sessionDestroyed")
        #expect(destroyed?["animation"] == "decline")
        #expect(window.waitForClose() == CloseCode.sessionDestroyed.rawValue)
        // The other, full-browser scene stays connected and the document is gone for it.
        #expect(Self.open(other, id).errorCode == "document_not_found")
    }

    @Test func aDeletedDocumentLeavesNoTraceInOtherUsersSessionsEvenAfterAKill() throws {
        let server = try ServerProcess()
        let alice = try server.client(), bob = try server.client()
        _ = alice.connect(name: "alice")
        let bobSession = bob.connect(name: "bob")
        let id = Self.create(alice, title: "Secret plan", text: "launch codes 1234")
        _ = Self.open(bob, id)
        _ = bob.request("updateActivity", ["activity": [
            "activityType": "panes.document", "title": "Secret plan", "targetContentIdentifier": .string(id),
            "userInfo": ["note": "bob's own words"],
        ]])
        bob.socket.close()
        let inspector = InspectCommandTests()
        #expect(try inspector.inspect(server.data, json: false).contains("Secret plan"), "the window showed it")

        #expect(alice.request("deleteDocument", ["document": .string(id)])["ok"] == true)
        for json in [false, true] {
            let printed = try inspector.inspect(server.data, json: json)
            #expect(printed.contains(bobSession["session"]!["persistentIdentifier"]!.stringValue!))
            for trace in ["Secret plan", "launch codes", id] { #expect(!printed.contains(trace), "\(trace) is still stored") }
            #expect(printed.contains("bob's own words"), "the window's own note stays")
        }

        server.kill()
        server.wait()
        let restarted = try server.restarted()
        let back = try restarted.client()
        let resumed = back.connect(["session": TestClient.credentials(bobSession)], name: "bob")
        #expect(resumed["restoration"]?["status"] == "document_gone")
        #expect(resumed["session"]?["stateRestorationActivity"] == .null)
        #expect(resumed["session"]?["title"] == "")
    }

    @Test(arguments: TestStore.endToEnd) func aDocumentIsUnloadedOnceNoSceneHasItOpen(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let a = try server.client(), b = try server.client()
        _ = a.connect(name: "alice")
        _ = b.connect(name: "bob")
        let id = Self.create(a, text: String(repeating: "memory ", count: 1_000))
        #expect(try Self.gauge(server, "panes_documents") == 1)
        #expect(try Self.gauge(server, "panes_documents_loaded") == 0)
        _ = Self.open(a, id)
        _ = Self.open(b, id)
        #expect(try Self.gauge(server, "panes_documents_loaded") == 1)

        #expect(a.request("closeDocument", ["document": .string(id)])["ok"] == true)
        #expect(try Self.gauge(server, "panes_documents_loaded") == 1)  // bob still has it
        b.socket.close()
        // The server learns of the close asynchronously: wait for it, with a generous deadline.
        let deadline = Date(timeIntervalSinceNow: 10)
        var loaded = try Self.gauge(server, "panes_documents_loaded")
        while loaded != 0, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            loaded = try Self.gauge(server, "panes_documents_loaded")
        }
        #expect(loaded == 0)
        #expect(try Self.gauge(server, "panes_documents") == 1)
        // And it loads again, whole.
        #expect(Self.open(a, id)["result"]?["text"]?.stringValue?.count == 7_000)
    }
}

extension JSONValue {
    /// The `error.code` of a failed reply.
    var errorCode: String? { self["error"]?["code"]?.stringValue }
}
