@_spi(Testing) import PanesCore
import PanesCoreTestSupport
import Testing

/// Edits queued before an access change (behind a commit in flight, from a scene gone since,
/// on another node) are judged by the rights of when their batch is made, not of when they came:
/// nothing a viewer or a revoked link sent lands after the change.
@Suite struct DocumentRightsQueuedEditTests {
    static func edit(_ harness: inout HubHarness, _ connection: ConnectionID, _ document: String, revision: Int64,
                     _ operation: JSONValue, opId: String) -> [Effect] {
        harness.send(connection, "edit", ["document": .string(document), "revision": .int(revision),
                                          "operation": operation, "opId": .string(opId)])
    }

    static func reply(_ effects: [Effect], to connection: ConnectionID) -> [JSONValue] {
        effects.messages(to: connection).filter { $0["type"] == "reply" }
    }

    @Test func anEditWaitingBehindACommitWhenTheSenderIsDowngradedIsRefused() {
        var harness = HubHarness(authenticator: DocumentRightsTests.tokens)
        let (ed, eve, document) = DocumentRightsTests.setUp(&harness)
        #expect(harness.openDocument(eve, document)["result"]?["role"] == "editor")
        harness.completesCommits = false
        // The first edit's commit is in flight; the second waits behind it.
        _ = Self.edit(&harness, eve, document, revision: 0, [5, "!"], opId: "eve:1")
        _ = Self.edit(&harness, eve, document, revision: 0, [5, "?"], opId: "eve:2")
        #expect(harness.pendingCommits.count == 1)
        let shared = harness.send(ed, "shareDocument", ["document": .string(document), "user": "eve", "role": "viewer"])
        #expect(shared.events(to: eve, named: "documentAccessChanged").first?["role"] == "viewer")
        let produced = harness.completeCommits()
        let replies = Self.reply(produced, to: eve)
        // The one in flight was committed before the change; the waiting one is refused.
        #expect(replies.count == 2)
        #expect(replies.first?["ok"] == true)
        #expect(replies.last?["error"]?["code"] == "forbidden")
        #expect(replies.last?["error"]?["message"]?.stringValue?.contains("changed before this edit") == true)
        #expect(harness.text(of: document) == "hello!")
        #expect(produced.events(to: ed, named: "documentOperation").count == 0)
    }

    @Test func anEditWaitingUnderALinkThatIsRevokedIsRefusedEvenIfItsSceneHasGone() {
        var harness = HubHarness(authenticator: DocumentRightsTests.tokens)
        let (ed, eve, document) = DocumentRightsTests.setUp(&harness)
        _ = DocumentRightsTests.share(&harness, ed, document, "eve", "none")
        let token = harness.request(ed, "createDocumentLink", ["document": .string(document), "role": "editor"])["result"]?["token"]
        let link = harness.request(ed, "listDocumentShares", ["document": .string(document)])["result"]?["links"]?.arrayValue?.first?["id"]
        #expect(harness.request(eve, "openDocument", ["document": .string(document), "link": token ?? .null])["result"]?["role"]
                    == "editor")
        // Ed's own edit holds the channel; Eve's (under the link) waits behind it.
        #expect(harness.openDocument(ed, document)["ok"] == true)
        harness.completesCommits = false
        _ = Self.edit(&harness, ed, document, revision: 0, [5, "."], opId: "ed:1")
        _ = Self.edit(&harness, eve, document, revision: 0, [5, "!"], opId: "eve:1")
        // Eve's window goes (its edit stays queued), then the link is revoked.
        _ = harness.run(.closed(eve, abnormal: false))
        _ = harness.send(ed, "revokeDocumentLink", ["document": .string(document), "link": link ?? .null])
        _ = harness.completeCommits()
        #expect(harness.text(of: document) == "hello.")
    }

    @Test func anEditWaitingUnderALinkThatStandsIsAppliedAfterItsSceneHasGone() {
        var harness = HubHarness(authenticator: DocumentRightsTests.tokens)
        let (ed, eve, document) = DocumentRightsTests.setUp(&harness)
        _ = DocumentRightsTests.share(&harness, ed, document, "eve", "none")
        let token = harness.request(ed, "createDocumentLink", ["document": .string(document), "role": "editor"])["result"]?["token"]
        _ = harness.request(eve, "openDocument", ["document": .string(document), "link": token ?? .null])
        #expect(harness.openDocument(ed, document)["ok"] == true)
        harness.completesCommits = false
        _ = Self.edit(&harness, ed, document, revision: 0, [5, "."], opId: "ed:1")
        _ = Self.edit(&harness, eve, document, revision: 0, [5, "!"], opId: "eve:1")
        _ = harness.run(.closed(eve, abnormal: false))
        _ = harness.completeCommits()
        // What it was sent under still stands: it is applied (and a resend would be a duplicate).
        #expect(harness.text(of: document) == "hello!.")
    }

    @Test func anEditWaitingOnOneNodeIsRefusedOnceAnotherNodesDowngradeIsRead() {
        let nodes = ClusterDocumentRightsTests.setUp()
        var (a, b) = (nodes.a, nodes.b)
        let (ed, eve, document) = (nodes.ed, nodes.eve, nodes.document)
        #expect(b.openDocument(eve, document)["result"]?["role"] == "editor")
        b.completesCommits = false
        _ = Self.edit(&b, eve, document, revision: 0, [5, "!"], opId: "eve:1")
        _ = Self.edit(&b, eve, document, revision: 0, [5, "?"], opId: "eve:2")
        _ = a.send(ed, "shareDocument", ["document": .string(document), "user": "eve", "role": "viewer"])
        let told = TwoNodes.deliver(a.effects, to: &b)
        #expect(told.events(to: eve, named: "documentAccessChanged").first?["role"] == "viewer")
        let replies = Self.reply(b.completeCommits(), to: eve)
        #expect(replies.map { $0["ok"] == true } == [true, false])
        #expect(replies.last?["error"]?["code"] == "forbidden")
        #expect(b.text(of: document) == "hello!")
    }

    @Test func anEditWaitingWhenItsScenesTokenIsRefreshedToAViewerIsRefused() {
        let tokens = Authenticator.tokens([
            "t-ed": .init(user: "ed", name: "Ed", workspaces: ["acme": .editor]),
            "t-eve": .init(user: "eve", name: "Eve", workspaces: ["acme": .editor]),
            "t-eve-viewer": .init(user: "eve", name: "Eve", workspaces: ["acme": .viewer]),
        ])
        var harness = HubHarness(authenticator: tokens)
        let ed = DocumentRightsTests.connect(&harness, "t-ed")
        let eve = DocumentRightsTests.connect(&harness, "t-eve")
        let document = harness.createDocument(ed, text: "hello")
        #expect(harness.openDocument(eve, document)["result"]?["role"] == "editor")
        harness.completesCommits = false
        _ = Self.edit(&harness, eve, document, revision: 0, [5, "!"], opId: "eve:1")
        _ = Self.edit(&harness, eve, document, revision: 0, [5, "?"], opId: "eve:2")
        #expect(harness.request(eve, "refreshToken", ["token": "t-eve-viewer"])["ok"] == true)
        let replies = Self.reply(harness.completeCommits(), to: eve)
        #expect(replies.map { $0["ok"] == true } == [true, false])
        #expect(replies.last?["error"]?["code"] == "forbidden")
        #expect(harness.text(of: document) == "hello!")
    }
}
