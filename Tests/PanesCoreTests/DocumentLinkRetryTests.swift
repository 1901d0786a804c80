@_spi(Testing) import PanesCore
import PanesCoreTestSupport
import Testing

/// `createDocumentLink` with an `idempotencyKey` is applied once: a retry gets the same link and
/// the same token (derived, not kept), on this node, after a restart and through another node.
@Suite struct DocumentLinkRetryTests {
    static func create(_ harness: inout HubHarness, _ connection: ConnectionID, _ document: String, key: String,
                       role: String = "viewer") -> JSONValue {
        harness.request(connection, "createDocumentLink", ["document": .string(document), "role": .string(role),
                                                           "expiresInMs": 60_000, "idempotencyKey": .string(key)])
    }

    static func links(_ harness: inout HubHarness, _ connection: ConnectionID, _ document: String) -> [JSONValue] {
        harness.request(connection, "listDocumentShares", ["document": .string(document)])["result"]?["links"]?.arrayValue ?? []
    }

    @Test func aRetryAfterALostReplyGetsTheSameLinkAndToken() throws {
        var harness = HubHarness(authenticator: DocumentRightsTests.tokens)
        let (ed, eve, document) = DocumentRightsTests.setUp(&harness)
        let first = Self.create(&harness, ed, document, key: "k:1")
        let token = try #require(first["result"]?["token"]?.stringValue)
        #expect(token.hasPrefix("pdl_") && token.count == 68)
        // The reply was lost: the same request again, on another connection of the same user.
        let again = DocumentRightsTests.connect(&harness, "t-ed")
        let retry = Self.create(&harness, again, document, key: "k:1")
        #expect(retry["result"] == first["result"])
        #expect(Self.links(&harness, ed, document).count == 1)
        // The token is kept nowhere: neither in the access nor in the request's record.
        let stored = harness.store.loadStateOrEmpty()
        #expect(!"\(stored.access)".contains(token))
        #expect(!"\(stored.requestRecords)".contains(token))
        // And it opens the document.
        #expect(harness.request(eve, "openDocument", ["document": .string(document), "link": .string(token)])["result"]?["role"]
                    == "editor")

        // After a restart, the record answers with the same token too.
        var restarted = try harness.restarted(ids: .sequential(from: 1 << 20))
        let ed2 = DocumentRightsTests.connect(&restarted, "t-ed")
        #expect(Self.create(&restarted, ed2, document, key: "k:1")["result"] == first["result"])
        #expect(Self.links(&restarted, ed2, document).count == 1)
    }

    @Test func anotherKeyMakesAnotherLinkAndAReusedKeyIsRefused() throws {
        var harness = HubHarness(authenticator: DocumentRightsTests.tokens)
        let (ed, _, document) = DocumentRightsTests.setUp(&harness)
        let first = try #require(Self.create(&harness, ed, document, key: "k:1")["result"]?["token"]?.stringValue)
        let second = try #require(Self.create(&harness, ed, document, key: "k:2")["result"]?["token"]?.stringValue)
        #expect(first != second)
        #expect(Self.links(&harness, ed, document).count == 2)
        // The same key for another request: refused, nothing made.
        let reused = Self.create(&harness, ed, document, key: "k:1", role: "editor")
        #expect(reused["error"]?["code"] == "idempotency_key_reused")
        #expect(Self.links(&harness, ed, document).count == 2)
        // Another user's same key is theirs: Ada (a workspace owner) makes her own link.
        let ada = DocumentRightsTests.connect(&harness, "t-ada")
        let hers = try #require(Self.create(&harness, ada, document, key: "k:1")["result"]?["token"]?.stringValue)
        #expect(hers != first)
        #expect(Self.links(&harness, ed, document).count == 3)
    }

    @Test func aRetryThroughAnotherNodeGetsTheSameToken() throws {
        let store = MemoryStore()
        var a = HubHarness(authenticator: DocumentRightsTests.tokens, store: store, node: NodeID("a"), ids: .sequential(from: 0))
        var b = HubHarness(authenticator: DocumentRightsTests.tokens, stored: try store.loadState(), store: store,
                           node: NodeID("b"), ids: .sequential(from: 1 << 40))
        let ed = DocumentRightsTests.connect(&a, "t-ed")
        let document = a.createDocument(ed, text: "hello")
        let first = Self.create(&a, ed, document, key: "k:1")
        #expect(first["result"]?["token"]?.stringValue != nil)
        _ = TwoNodes.deliver(a.effects, to: &b)
        let edOnB = DocumentRightsTests.connect(&b, "t-ed")
        #expect(Self.create(&b, edOnB, document, key: "k:1")["result"] == first["result"])
        #expect(Self.links(&b, edOnB, document).count == 1)
    }
}
