import PanesServerTestSupport
import Foundation
import PanesCore
import PanesTestSupport
import Testing

/// An edit the server received before a downgrade but had not applied yet (waiting behind the
/// document's commit in flight while the disk is slow) is refused, over real sockets: the
/// server in this process over a store whose commits wait at a gate (`DurabilityBarrierTests`).
@Suite(.serialized) struct QueuedEditRightsEndToEndTests {
    static let tokens = Authenticator.tokens([
        "t-ed": .init(user: "ed", name: "Ed", workspaces: ["acme": .editor]),
        "t-eve": .init(user: "eve", name: "Eve", workspaces: ["acme": .editor]),
    ])

    static func edit(_ id: String, _ requestID: String, revision: Int, _ operation: String, _ opId: String) -> String {
        #"{"type":"edit","id":"\#(requestID)","document":"\#(id)","revision":\#(revision),"operation":\#(operation),"opId":"\#(opId)"}"#
    }

    @Test func anEditWaitingBehindASlowCommitWhenItsSenderIsDowngradedIsRefused() throws {
        let store = DurabilityBarrierTests.GatedStore()
        let server = try DurabilityBarrierTests.InProcessServer(store: store, settings: Settings(), authenticator: Self.tokens)
        defer { store.open(); server.stop() }
        let ed = try server.client(), eve = try server.client()
        _ = ed.connect(["auth": ["token": "t-ed"], "workspace": "acme"])
        _ = eve.connect(["auth": ["token": "t-eve"], "workspace": "acme"])
        let id = DocumentsEndToEndTests.create(ed, text: "hello")
        #expect(DocumentsEndToEndTests.open(ed, id)["ok"] == true)
        #expect(DocumentsEndToEndTests.open(eve, id)["result"]?["role"] == "editor")

        // The disk stalls with Eve's first edit in its commit; her second waits behind it.
        store.close()
        eve.socket.send(Self.edit(id, "e1", revision: 0, #"[5,"!"]"#, "eve:1"))
        #expect(store.waitForHeldWrite(), "the first edit's commit reached the store")
        eve.socket.send(Self.edit(id, "e2", revision: 0, #"[5,"?"]"#, "eve:2"))
        // A ping answered after it: the server has read (and queued) the second edit.
        #expect(eve.request("ping", timeout: 5)["ok"] == true)
        // Ed makes Eve a viewer meanwhile (its write waits at the gate too); his ping after it
        // says the server has taken the change.
        ed.socket.send(#"{"type":"shareDocument","id":"s1","document":"\#(id)","user":"eve","role":"viewer"}"#)
        #expect(ed.request("ping", timeout: 5)["ok"] == true)

        store.open()
        #expect(eve.next(timeout: 10) { $0["re"] == "e1" }?["result"]?["revision"] == 1,
                "the edit whose commit was in flight was ordered before the change")
        let refused = eve.next(timeout: 10) { $0["re"] == "e2" }
        #expect(refused?["error"]?["code"] == "forbidden")
        #expect(eve.event("documentAccessChanged")?["role"] == "viewer")
        #expect(ed.next(timeout: 10) { $0["re"] == "s1" }?["ok"] == true)
        #expect(DocumentsEndToEndTests.open(ed, id)["result"]?["text"] == "hello!")
    }
}
