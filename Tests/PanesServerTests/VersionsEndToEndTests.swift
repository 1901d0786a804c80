import Foundation
import PanesCore
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// Versions through the real binary over real sockets, on both stores: saved and read back after
/// a SIGKILL, a restore that reaches the other window, checkpoints after a pause, bad input
/// refused naming its field, and versions gone with their document.
@Suite struct VersionsEndToEndTests {
    @Test(arguments: TestStore.endToEnd) func versionsSurviveSIGKILLAndARestoreReachesEveryWindow(_ store: TestStore) throws {
        let server = try ServerProcess(store: store, config: ["settings": ["versionCheckpointPauseMs": 200]])
        let alice = try server.client(), bob = try server.client()
        _ = alice.connect(name: "alice")
        _ = bob.connect(name: "bob")
        let id = DocumentsEndToEndTests.create(alice, text: "e\u{301}crit 😀\n")
        _ = DocumentsEndToEndTests.open(alice, id)
        _ = DocumentsEndToEndTests.open(bob, id)
        let saved = alice.request("saveVersion", ["document": .string(id), "name": "Première"])
        #expect(saved["ok"] == true, "\(saved)")
        let version = saved["result"]?["version"]?["id"] ?? .null
        let long = alice.request("saveVersion", ["document": .string(id), "name": .string(String(repeating: "n", count: 257))])
        #expect(long["error"]?["code"] == "too_large")
        #expect(long["error"]?["field"] == "name")
        #expect(alice.request("edit", ["document": .string(id), "revision": 0, "operation": [8, "!", 1],
                                       "opId": "alice:1"])["ok"] == true)
        #expect(bob.event("documentOperation")?["revision"] == 1)
        // A pause: the server checkpoints revision 1 by itself.
        var listed: [JSONValue] = []
        let deadline = Date(timeIntervalSinceNow: 10)
        while Date() < deadline {
            listed = bob.request("listVersions", ["document": .string(id)])["result"]?["versions"]?.arrayValue ?? []
            if listed.count == 2 { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(listed.map { $0["kind"] } == ["checkpoint", "named"])
        #expect(listed.first?["revision"] == 1)

        server.kill(SIGKILL)
        server.wait()
        let restarted = try server.restarted()
        let carol = try restarted.client(), dave = try restarted.client()
        _ = carol.connect(name: "carol")
        _ = dave.connect(name: "dave")
        let read = carol.request("readVersion", ["document": .string(id), "version": version])
        #expect(read["result"]?["text"]?.stringValue?.unicodeScalars.elementsEqual("e\u{301}crit 😀\n".unicodeScalars) == true)
        #expect(read["result"]?["version"]?["name"] == "Première")

        _ = DocumentsEndToEndTests.open(carol, id)
        _ = DocumentsEndToEndTests.open(dave, id)
        let restored = carol.request("restoreVersion", ["document": .string(id), "version": version])
        #expect(restored["result"]?["revision"] == 2, "\(restored)")
        #expect(restored["result"]?["operation"] == [8, -1, 1])
        let event = dave.event("documentOperation")
        #expect(event?["revision"] == 2)
        #expect(event?["operation"] == [8, -1, 1])
        #expect(event?["author"]?["user"] == "carol")
        let missing = carol.request("readVersion", ["document": .string(id), "version": "ver_missing"])
        #expect(missing["error"]?["code"] == "version_not_found")
        #expect(missing["error"]?["field"] == "version")

        #expect(carol.request("deleteDocument", ["document": .string(id)])["ok"] == true)
        let gone = carol.request("listVersions", ["document": .string(id)])
        #expect(gone["error"]?["code"] == "document_not_found")
    }
}
