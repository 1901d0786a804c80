import Foundation
import PanesCore
import PanesJSON
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// A window whose edit's reply was lost asks, after a restart or after the document was
/// unloaded, whether it was applied. Another client's two op-id streams that are the same text
/// in other bytes must not make the server forget it (their stored form once could not be read
/// back, and the document opened remembering no applied edit: the resent one applied twice).
@Suite struct AppliedStreamsEndToEndTests {
    @Test(arguments: TestStore.endToEnd, [false, true])
    func aLostReplysEditIsStillKnownAppliedAfterARestart(_ store: TestStore, twinStreams: Bool) throws {
        let server = try ServerProcess(store: store, config: ["settings": [
            "snapshotEvery": 2, "operationLogRetention": 2, "operationLogRetentionMs": 0]])
        let tab = try server.client()
        _ = tab.connect(name: "alice")
        let id = DocumentsEndToEndTests.create(tab, title: "Twins")
        _ = DocumentsEndToEndTests.open(tab, id)
        let ids = ["victim.page1:1"] + (twinStreams ? ["caf\u{E9}:1", "cafe\u{301}:1"] : ["cafe:1", "cafx:1"])
            + (1...6).map { "filler:\($0)" }
        var revision: Int64 = 0
        for opId in ids {
            let reply = tab.request("edit", ["document": .string(id), "revision": .int(revision),
                                             "operation": revision == 0 ? ["x"] : [.int(revision), "x"],
                                             "opId": .string(opId)])
            #expect(reply["ok"] == true, "\(reply)")
            revision = reply["result"]?["revision"]?.intValue ?? revision
        }
        let before = tab.request("openDocument", ["document": .string(id), "revision": 0, "pending": ["victim.page1:1"]])
        #expect(before["result"]?["applied"] == ["victim.page1:1"], "before the restart: \(before)")
        server.kill(SIGTERM)
        server.wait()

        let restarted = try server.restarted()
        let again = try restarted.client()
        _ = again.connect(name: "alice")
        let after = again.request("openDocument", ["document": .string(id), "revision": 0, "pending": ["victim.page1:1"]])
        #expect(after["result"]?["catchUp"] == "snapshot")
        #expect(after["result"]?["applied"] == ["victim.page1:1"], "after the restart: \(after)")
    }

    /// No restart: the only window closes (the document is unloaded), one comes back and asks.
    @Test(arguments: TestStore.endToEnd)
    func aLostReplysEditIsStillKnownAppliedAfterTheDocumentIsUnloaded(_ store: TestStore) throws {
        let server = try ServerProcess(store: store, config: ["settings": [
            "snapshotEvery": 2, "operationLogRetention": 2, "operationLogRetentionMs": 0]])
        let tab = try server.client()
        _ = tab.connect(name: "alice")
        let id = DocumentsEndToEndTests.create(tab, title: "Twins")
        _ = DocumentsEndToEndTests.open(tab, id)
        let ids = ["victim.page1:1", "caf\u{E9}:1", "cafe\u{301}:1"] + (1...6).map { "filler:\($0)" }
        var revision: Int64 = 0
        for opId in ids {
            let reply = tab.request("edit", ["document": .string(id), "revision": .int(revision),
                                             "operation": revision == 0 ? ["x"] : [.int(revision), "x"],
                                             "opId": .string(opId)])
            #expect(reply["ok"] == true, "\(reply)")
            revision = reply["result"]?["revision"]?.intValue ?? revision
        }
        tab.socket.close()
        // Unloaded: the next open reads it back from the store.
        #expect(try eventually { try DocumentsEndToEndTests.gauge(server, "panes_documents_loaded") == 0 })
        let again = try server.client()
        _ = again.connect(name: "alice")
        let after = again.request("openDocument", ["document": .string(id), "revision": 0, "pending": ["victim.page1:1"]])
        #expect(after["result"]?["catchUp"] == "snapshot")
        #expect(after["result"]?["applied"] == ["victim.page1:1"], "after an unload: \(after)")
    }
}
