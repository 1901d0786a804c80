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
    /// A server that snapshots every 2 edits and keeps a log of 2: the applied op ids past it
    /// are the stored `AppliedStreams`.
    static func server(_ store: TestStore) throws -> ServerProcess {
        try ServerProcess(store: store, config: ["settings": [
            "snapshotEvery": 2, "operationLogRetention": 2, "operationLogRetentionMs": 0]])
    }

    /// Alice's window on a new document, which edits it once per op id, then six more times.
    static func edited(_ server: ServerProcess, opIds: [String]) throws -> (tab: TestClient, id: String) {
        let tab = try server.client()
        _ = tab.connect(name: "alice")
        let id = DocumentsEndToEndTests.create(tab, title: "Twins")
        _ = DocumentsEndToEndTests.open(tab, id)
        var revision: Int64 = 0
        for opId in opIds + (1...6).map({ "filler:\($0)" }) {
            let reply = tab.request("edit", ["document": .string(id), "revision": .int(revision),
                                             "operation": revision == 0 ? ["x"] : [.int(revision), "x"],
                                             "opId": .string(opId)])
            #expect(reply["ok"] == true, "\(reply)")
            revision = reply["result"]?["revision"]?.intValue ?? revision
        }
        return (tab, id)
    }

    /// A new window of Alice's re-opening the document from revision 0, asking about the edit.
    static func reopened(_ server: ServerProcess, _ id: String) throws -> JSONValue {
        let again = try server.client()
        _ = again.connect(name: "alice")
        return again.request("openDocument", ["document": .string(id), "revision": 0, "pending": ["victim.page1:1"]])
    }

    @Test(arguments: TestStore.endToEnd, [false, true])
    func aLostReplysEditIsStillKnownAppliedAfterARestart(_ store: TestStore, twinStreams: Bool) throws {
        let server = try Self.server(store)
        let (tab, id) = try Self.edited(server, opIds: ["victim.page1:1"]
                                         + (twinStreams ? ["caf\u{E9}:1", "cafe\u{301}:1"] : ["cafe:1", "cafx:1"]))
        let before = tab.request("openDocument", ["document": .string(id), "revision": 0, "pending": ["victim.page1:1"]])
        #expect(before["result"]?["applied"] == ["victim.page1:1"], "before the restart: \(before)")
        server.kill(SIGTERM)
        server.wait()

        let after = try Self.reopened(try server.restarted(), id)
        #expect(after["result"]?["catchUp"] == "snapshot")
        #expect(after["result"]?["applied"] == ["victim.page1:1"], "after the restart: \(after)")
    }

    /// No restart: the only window closes (the document is unloaded), one comes back and asks.
    @Test(arguments: TestStore.endToEnd)
    func aLostReplysEditIsStillKnownAppliedAfterTheDocumentIsUnloaded(_ store: TestStore) throws {
        let server = try Self.server(store)
        let (tab, id) = try Self.edited(server, opIds: ["victim.page1:1", "caf\u{E9}:1", "cafe\u{301}:1"])
        tab.socket.close()
        // Unloaded: the next open reads it back from the store.
        #expect(try eventually { try DocumentsEndToEndTests.gauge(server, "panes_documents_loaded") == 0 })
        let after = try Self.reopened(server, id)
        #expect(after["result"]?["catchUp"] == "snapshot")
        #expect(after["result"]?["applied"] == ["victim.page1:1"], "after an unload: \(after)")
    }
}
