import PanesCore
import PanesCoreTestSupport
import Testing

/// Versions: saved, listed, read, compared and restored through the hub, checkpoints taken
/// after a pause and every N operations, and every refusal leaving the store as it was.
@Suite struct VersionTests {
    static func save(_ harness: inout HubHarness, _ connection: ConnectionID, _ id: String, _ name: String) -> JSONValue {
        harness.request(connection, "saveVersion", ["document": .string(id), "name": .string(name)])
    }

    static func versions(_ harness: inout HubHarness, _ connection: ConnectionID, _ id: String) -> [JSONValue] {
        harness.request(connection, "listVersions", ["document": .string(id)])["result"]?["versions"]?.arrayValue ?? []
    }

    @Test func aSavedVersionIsListedAndReadBackAfterLaterEdits() {
        var harness = HubHarness()
        let (a, _) = harness.connect(name: "alice")
        let id = harness.createDocument(a, text: "hello")
        _ = harness.openDocument(a, id)
        #expect(harness.edit(a, id, revision: 0, [5, " world"], opId: "a:1")["ok"] == true)
        let saved = Self.save(&harness, a, id, "Draft 1")
        #expect(saved["ok"] == true, "\(saved)")
        let version = saved["result"]?["version"]
        #expect(version?["name"] == "Draft 1")
        #expect(version?["kind"] == "named")
        #expect(version?["revision"] == 1)
        #expect(version?["createdBy"] == "alice")
        #expect(version?["length"] == 11)
        #expect(harness.edit(a, id, revision: 1, [-5, 6], opId: "a:2")["ok"] == true)

        let listed = Self.versions(&harness, a, id)
        #expect(listed.map { $0["id"] } == [version?["id"] ?? .null])
        let read = harness.request(a, "readVersion", ["document": .string(id), "version": version?["id"] ?? .null])
        #expect(read["result"]?["text"] == "hello world")
        #expect(read["result"]?["version"]?["name"] == "Draft 1")
        #expect(harness.text(of: id) == " world")
    }

    @Test func restoringIsAnEditByTheRestoringSceneThatEveryOtherWindowReceives() {
        var harness = HubHarness()
        let (a, _) = harness.connect(name: "alice")
        let (b, _) = harness.connect(name: "bob")
        let id = harness.createDocument(a, text: "one two three")
        _ = harness.openDocument(a, id)
        _ = harness.openDocument(b, id)
        let version = Self.save(&harness, a, id, "Before")["result"]?["version"]?["id"] ?? .null
        #expect(harness.edit(b, id, revision: 0, [4, -4, "2 ", 5], opId: "b:1")["ok"] == true)
        #expect(harness.text(of: id) == "one 2 three")

        let produced = harness.send(a, "restoreVersion", ["document": .string(id), "version": version])
        let reply = produced.messages(to: a).last { $0["type"] == "reply" }
        #expect(reply?["ok"] == true, "\(String(describing: reply))")
        #expect(reply?["result"]?["revision"] == 2)
        #expect(reply?["result"]?["version"]?["id"] == version)
        #expect(reply?["result"]?["operation"] == [4, "two", -1, 6])
        #expect(harness.text(of: id) == "one two three")
        // Bob's window gets it as an ordinary operation by Alice; Alice's gets none (her reply has it).
        let operations = produced.events(to: b, named: "documentOperation")
        #expect(operations.count == 1)
        #expect(operations.first?["author"]?["user"] == "alice")
        #expect(produced.events(to: a, named: "documentOperation").isEmpty)
        // What was typed before the restore is kept as a checkpoint first.
        let listed = Self.versions(&harness, a, id)
        #expect(listed.first?["kind"] == "checkpoint")
        #expect(listed.first?["revision"] == 1)
        // Restoring the same version again changes nothing.
        let again = harness.request(a, "restoreVersion", ["document": .string(id), "version": version])
        #expect(again["result"]?["unchanged"] == true)
        #expect(again["result"]?["revision"] == 2)
    }

    @Test func aRestoreIsTransformedPastEditsThatCameWhileItsVersionWasRead() {
        var harness = HubHarness()
        let (a, _) = harness.connect(name: "alice")
        let (b, _) = harness.connect(name: "bob")
        let id = harness.createDocument(a, text: "abc")
        _ = harness.openDocument(a, id)
        _ = harness.openDocument(b, id)
        let version = Self.save(&harness, a, id, "abc")["result"]?["version"]?["id"] ?? .null
        #expect(harness.edit(b, id, revision: 0, [1, -1, "X", 1], opId: "b:1")["ok"] == true)  // aXc
        harness.completesLoads = false
        _ = harness.send(a, "restoreVersion", ["document": .string(id), "version": version])
        #expect(harness.edit(b, id, revision: 1, ["Z", 3], opId: "b:2")["ok"] == true)  // ZaXc
        harness.completesLoads = true
        let produced = harness.settle()
        #expect(produced.messages(to: a).last?["ok"] == true)
        // Bob's later insert stays; the version's middle letter comes back.
        #expect(harness.text(of: id) == "Zabc")
    }

    @Test func compareAnswersTheOperationFromOneVersionToTheOther() {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let id = harness.createDocument(a, text: "alpha\nbeta\ngamma\n")
        _ = harness.openDocument(a, id)
        let first = Self.save(&harness, a, id, "first")["result"]?["version"]?["id"] ?? .null
        #expect(harness.edit(a, id, revision: 0, [6, -4, "BETA", 7], opId: "a:1")["ok"] == true)
        let second = Self.save(&harness, a, id, "second")["result"]?["version"]?["id"] ?? .null
        let compared = harness.request(a, "compareVersions", ["document": .string(id), "from": first, "to": second])
        #expect(compared["result"]?["operation"] == [6, "BETA", -4, 7])
        #expect(compared["result"]?["from"]?["id"] == first)
        #expect(compared["result"]?["to"]?["id"] == second)
    }

    @Test func badInputIsRefusedNamingTheFieldAndNothingIsStored() {
        var settings = Settings()
        settings.maxVersionNameBytes = 8
        var harness = HubHarness(settings: settings)
        let (a, _) = harness.connect()
        let (other, _) = harness.connect(["workspace": "globex"])
        let id = harness.createDocument(a, text: "x")
        _ = harness.openDocument(a, id)
        let version = Self.save(&harness, a, id, "ok")["result"]?["version"]?["id"] ?? .null

        let long = harness.send(a, "saveVersion", ["document": .string(id), "name": "123456789"])
        let longReply = long.messages(to: a).last
        #expect(longReply?["error"]?["code"] == "too_large")
        #expect(longReply?["error"]?["field"] == "name")
        #expect(longReply?["error"]?["message"]?.stringValue?.contains("maxVersionNameBytes") == true)
        #expect(long.persisted.isEmpty)
        #expect(harness.request(a, "saveVersion", ["document": .string(id), "name": ""])["error"]?["field"] == "name")
        #expect(harness.request(a, "saveVersion", ["document": .string(id)])["error"]?["code"] == "missing_field")

        for (type, field) in [("readVersion", "version"), ("restoreVersion", "version")] {
            let reply = harness.request(a, type, ["document": .string(id), "version": "ver_nope"])
            #expect(reply["error"]?["code"] == "version_not_found")
            #expect(reply["error"]?["field"] == .string(field))
        }
        let compared = harness.request(a, "compareVersions", ["document": .string(id), "from": version, "to": "ver_nope"])
        #expect(compared["error"]?["code"] == "version_not_found")
        #expect(compared["error"]?["field"] == "to")

        // Another workspace's document reads as not found, whatever the version.
        for type in ["listVersions", "readVersion", "restoreVersion", "saveVersion", "compareVersions"] {
            let reply = harness.request(other, type, ["document": .string(id), "version": version, "from": version,
                                                      "to": version, "name": "x"])
            #expect(reply["error"]?["code"] == "document_not_found", "\(type): \(reply)")
            #expect(reply["error"]?["field"] == "document")
        }
        #expect(harness.text(of: id) == "x")
        #expect(Self.versions(&harness, a, id).count == 1)
    }

    @Test func viewersMayListAndReadButNotSaveOrRestore() {
        let tokens = Authenticator.tokens([
            "t-ed": .init(user: "ed", name: "Ed", workspaces: ["acme": .editor]),
            "t-vic": .init(user: "vic", name: "Vic", workspaces: ["acme": .viewer]),
        ])
        var harness = HubHarness(authenticator: tokens)
        let (editor, _) = harness.connect(["auth": ["token": "t-ed"], "workspace": "acme"])
        let (viewer, _) = harness.connect(["auth": ["token": "t-vic"], "workspace": "acme"])
        let id = harness.createDocument(editor, text: "read me")
        _ = harness.openDocument(editor, id)
        _ = harness.openDocument(viewer, id)
        let version = Self.save(&harness, editor, id, "v")["result"]?["version"]?["id"] ?? .null
        #expect(Self.versions(&harness, viewer, id).count == 1)
        #expect(harness.request(viewer, "readVersion", ["document": .string(id), "version": version])["result"]?["text"] == "read me")
        #expect(Self.save(&harness, viewer, id, "mine").errorCode == "forbidden")
        #expect(harness.request(viewer, "restoreVersion", ["document": .string(id), "version": version]).errorCode == "forbidden")
        #expect(Self.versions(&harness, viewer, id).count == 1)
    }

    @Test func namedVersionsStopAtTheirLimit() {
        var settings = Settings()
        settings.maxNamedVersionsPerDocument = 2
        var harness = HubHarness(settings: settings)
        let (a, _) = harness.connect()
        let id = harness.createDocument(a, text: "x")
        _ = harness.openDocument(a, id)
        #expect(Self.save(&harness, a, id, "1")["ok"] == true)
        #expect(Self.save(&harness, a, id, "2")["ok"] == true)
        let third = Self.save(&harness, a, id, "3")
        #expect(third.errorCode == "too_many")
        #expect(third["error"]?["message"]?.stringValue?.contains("maxNamedVersionsPerDocument") == true)
        #expect(Self.versions(&harness, a, id).count == 2)
    }

    @Test func checkpointsComeEveryNOperationsAndAfterAPauseAndOnlyTheNewestAreKept() {
        var settings = Settings()
        settings.versionCheckpointOperations = 3
        settings.versionCheckpointPauseMs = 5_000
        settings.maxCheckpointsPerDocument = 2
        var harness = HubHarness(settings: settings)
        let (a, _) = harness.connect(name: "alice")
        let id = harness.createDocument(a, text: "")
        _ = harness.openDocument(a, id)
        for n in 0..<7 {
            #expect(harness.edit(a, id, revision: Int64(n), n == 0 ? ["x"] : [.int(Int64(n)), "x"], opId: "a:\(n)")["ok"] == true)
        }
        // After operations 3 and 6.
        #expect(Self.versions(&harness, a, id).map { $0["revision"] } == [6, 3])
        #expect(Self.versions(&harness, a, id).allSatisfy { $0["kind"] == "checkpoint" && $0["createdBy"] == "alice" })
        // A pause: operation 7 is checkpointed once nothing came for 5 s, and the oldest goes.
        harness.clock.advance(4_999)
        harness.run(.tick)
        #expect(Self.versions(&harness, a, id).count == 2)
        harness.clock.advance(1)
        harness.run(.tick)
        #expect(Self.versions(&harness, a, id).map { $0["revision"] } == [7, 6])
        // Nothing new: no checkpoint.
        harness.clock.advance(60_000)
        harness.run(.tick)
        #expect(Self.versions(&harness, a, id).map { $0["revision"] } == [7, 6])
    }

    @Test func aDocumentLeavingMemoryIsCheckpointedAndItsVersionsGoWithIt() throws {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let id = harness.createDocument(a, text: "a")
        _ = harness.openDocument(a, id)
        #expect(harness.edit(a, id, revision: 0, [1, "b"], opId: "a:1")["ok"] == true)
        _ = Self.save(&harness, a, id, "named")
        #expect(harness.request(a, "closeDocument", ["document": .string(id)])["ok"] == true)
        let listed = Self.versions(&harness, a, id)
        #expect(listed.map { $0["kind"] } == ["checkpoint", "named"])
        let checkpoint = listed.first?["id"] ?? .null
        #expect(harness.request(a, "readVersion", ["document": .string(id), "version": checkpoint])["result"]?["text"] == "ab")

        #expect(harness.request(a, "deleteDocument", ["document": .string(id)])["ok"] == true)
        #expect(try harness.store.loadVersions(DocumentID(id)).isEmpty)
        #expect(try harness.store.loadVersion(DocumentID(id), id: checkpoint.stringValue ?? "") == nil)
    }

    @Test func versionsSurviveARestart() throws {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let id = harness.createDocument(a, text: "kept")
        _ = harness.openDocument(a, id)
        let version = Self.save(&harness, a, id, "v1")["result"]?["version"]?["id"] ?? .null
        var restarted = try harness.restarted()
        let (b, _) = restarted.connect()
        #expect(restarted.request(b, "readVersion", ["document": .string(id), "version": version])["result"]?["text"] == "kept")
    }

    @Test func aVersionOpensInADedicatedWindowThatGoesWithItsDocument() {
        var harness = HubHarness()
        let (tab, _) = harness.connect()
        let id = harness.createDocument(tab, text: "then")
        _ = harness.openDocument(tab, id)
        let version = Self.save(&harness, tab, id, "v")["result"]?["version"]?["id"]?.stringValue ?? ""
        let activity: JSONValue = ["activityType": "panes.document.version", "title": "Plan — v",
                                   "targetContentIdentifier": .string("\(id)/\(version)")]
        let activation = harness.request(tab, "requestActivation", ["activity": activity])
        #expect(activation["result"]?["action"] == "open")
        let (window, result) = harness.connect(["ticket": activation["result"]?["ticket"] ?? .null])
        #expect(result["session"]?["configuration"] == "version")
        #expect(result["connectionOptions"]?["userActivities"]?.arrayValue?.first?["targetContentIdentifier"] == .string("\(id)/\(version)"))
        _ = harness.request(window, "updateActivity", ["activity": activity])
        // Asking again brings that window forward, not the live document's.
        #expect(harness.request(tab, "requestActivation", ["activity": activity])["result"]?["action"] == "activated")
        // Today's edits do not touch its switcher entry: it shows the version.
        #expect(harness.edit(tab, id, revision: 0, [4, " and now"], opId: "t:1")["ok"] == true)
        // A viewer's read of the version works in it without opening the document.
        #expect(harness.request(window, "readVersion", ["document": .string(id), "version": .string(version)])["result"]?["text"] == "then")

        let deleted = harness.send(tab, "deleteDocument", ["document": .string(id)])
        #expect(deleted.closes(window) == [.sessionDestroyed])
    }

    @Test func aSaveRetriedWithItsKeyIsAnsweredWithTheFirstVersionAndKeepsOne() {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let id = harness.createDocument(a, text: "x")
        _ = harness.openDocument(a, id)
        let fields: JSONObject = ["document": .string(id), "name": "once", "idempotencyKey": "k-1"]
        let first = harness.request(a, "saveVersion", fields)
        let retry = harness.request(a, "saveVersion", fields)
        #expect(first["ok"] == true)
        #expect(retry["result"]?["version"]?["id"] == first["result"]?["version"]?["id"])
        #expect(Self.versions(&harness, a, id).count == 1)
    }
}
