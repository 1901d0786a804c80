import PanesCore
import PanesCoreTestSupport
import Testing

/// Presence: shared selections, names and colours, moved through concurrent edits, gone when
/// their scene leaves.
@Suite struct DocumentPresenceTests {
    static func setUp(_ harness: inout HubHarness, text: String) -> (ConnectionID, ConnectionID, String) {
        let (a, _) = harness.connect(name: "alice")
        let (b, _) = harness.connect(name: "bob")
        let id = harness.createDocument(a, text: text)
        _ = harness.openDocument(a, id)
        _ = harness.openDocument(b, id)
        return (a, b, id)
    }

    static func presence(_ id: String, revision: Int64? = nil, anchor: Int64, head: Int64,
                         name: String? = nil, color: String? = nil) -> JSONObject {
        var fields: JSONObject = ["document": .string(id), "selection": ["anchor": .int(anchor), "head": .int(head)]]
        if let revision { fields["revision"] = .int(revision) }
        if let name { fields["name"] = .string(name) }
        if let color { fields["color"] = .string(color) }
        return fields
    }

    @Test func othersSeeTheSelectionNameAndColour() {
        var harness = HubHarness()
        let (a, b, id) = Self.setUp(&harness, text: "hello")
        let produced = harness.send(b, "setPresence", Self.presence(id, revision: 0, anchor: 1, head: 4, name: "Bob",
                                                                   color: "#3b82f6"))
        #expect(produced.messages(to: b).last?["result"] == ["revision": 0, "selection": ["anchor": 1, "head": 4]])
        #expect(produced.events(to: b, named: "presence").isEmpty)
        let event = produced.events(to: a, named: "presence").first
        #expect(event?["document"] == .string(id))
        #expect(event?["revision"] == 0)
        #expect(event?["user"] == "bob")
        #expect(event?["name"] == "Bob")
        #expect(event?["color"] == "#3b82f6")
        #expect(event?["selection"] == ["anchor": 1, "head": 4])
        #expect(event?["left"] == false)
        #expect(event?["scene"] != nil)
        // Presence is not stored.
        #expect(produced.persisted.isEmpty)
    }

    @Test func aLaterOpenSeesThePresenceMovedThroughEdits() {
        var harness = HubHarness()
        let (a, b, id) = Self.setUp(&harness, text: "abcdef")
        _ = harness.request(b, "setPresence", Self.presence(id, anchor: 3, head: 3, name: "Bob"))
        _ = harness.request(a, "setPresence", Self.presence(id, anchor: 1, head: 1))
        // Alice types "XY" at her caret: her caret moves past her text, bob's moves along.
        _ = harness.edit(a, id, revision: 0, [1, "XY", 5], opId: "a:1")

        let (c, _) = harness.connect(name: "carol")
        let presence = harness.openDocument(c, id)["result"]?["presence"]?.arrayValue ?? []
        #expect(presence.map { $0["user"] } == ["alice", "bob"])
        #expect(presence.map { $0["selection"] } == [["anchor": 3, "head": 3], ["anchor": 5, "head": 5]])
        #expect(presence.allSatisfy { $0["revision"] == 1 })
        #expect(presence.last?["name"] == "Bob")
    }

    @Test func aCaretAtAnotherScenesInsertStaysBeforeIt() {
        var harness = HubHarness()
        let (a, b, id) = Self.setUp(&harness, text: "ab")
        _ = harness.request(b, "setPresence", Self.presence(id, anchor: 1, head: 1))
        _ = harness.edit(a, id, revision: 0, [1, "X", 1], opId: "a:1")
        let (c, _) = harness.connect(name: "carol")
        let bob = harness.openDocument(c, id)["result"]?["presence"]?.arrayValue?.first
        #expect(bob?["selection"] == ["anchor": 1, "head": 1])
    }

    @Test func aSelectionFromAnOlderRevisionIsMovedToTheCurrentOne() {
        var harness = HubHarness()
        let (a, b, id) = Self.setUp(&harness, text: "0123456789")
        _ = harness.edit(a, id, revision: 0, ["😀😀", 10], opId: "a:1")
        _ = harness.edit(a, id, revision: 1, [4, -4, 4], opId: "a:2")
        // Bob's selection 1..5 was made on revision 0, before both edits: both ends shift past
        // the two inserted scalars (3..7), then the head, inside the deleted text, goes to
        // where it was (4).
        let produced = harness.send(b, "setPresence", Self.presence(id, revision: 0, anchor: 1, head: 5))
        #expect(produced.messages(to: b).last?["result"] == ["revision": 2, "selection": ["anchor": 3, "head": 4]])
        #expect(produced.events(to: a, named: "presence").first?["selection"] == ["anchor": 3, "head": 4])
        #expect(produced.events(to: a, named: "presence").first?["revision"] == 2)
    }

    /// A rename to a name canonically equivalent to the old one but other bytes (é as one code
    /// point, then as e and a combining accent) is news for list observers: names are compared
    /// by their bytes. (Compared as Swift strings, the list kept the old bytes.)
    @Test func aRenameToOtherBytesOfAnEquivalentNameReachesListObservers() {
        var harness = HubHarness()
        let (watcher, _) = harness.connect(name: "carol")
        let (a, _, id) = Self.setUp(&harness, text: "abc")
        _ = harness.request(watcher, "observeDocuments")
        _ = harness.request(a, "setPresence", ["document": .string(id), "name": "Ren\u{E9}"])
        harness.clock.advance(Millis(harness.hub.settings.documentListIntervalMs + harness.hub.settings.presenceIntervalMs))
        _ = harness.run(.tick)
        let decomposed = "Rene\u{301}"
        let renamed = harness.send(a, "setPresence", ["document": .string(id), "name": .string(decomposed)])
        harness.clock.advance(Millis(harness.hub.settings.documentListIntervalMs + harness.hub.settings.presenceIntervalMs))
        let listed = (renamed + harness.run(.tick)).events(to: watcher, named: "documentsChanged")
        let names = listed.compactMap { $0["document"]?["participants"]?.arrayValue?.first { $0["user"] == "alice" }?["name"]?.stringValue }
        #expect(names.last.map { Array($0.utf8) } == Array(decomposed.utf8), "\(listed)")
    }

    @Test func aSelectionBeyondTheTextIsClamped() {
        var harness = HubHarness()
        let (_, b, id) = Self.setUp(&harness, text: "abc")
        let reply = harness.request(b, "setPresence", Self.presence(id, anchor: 2, head: 99))
        #expect(reply["result"]?["selection"] == ["anchor": 2, "head": 3])
    }

    @Test func aNullSelectionHidesItAndAbsentFieldsKeepTheirValues() {
        var harness = HubHarness()
        let (a, b, id) = Self.setUp(&harness, text: "abc")
        _ = harness.request(b, "setPresence", Self.presence(id, anchor: 1, head: 2, name: "Bob", color: "#f00"))
        // Each past `presenceIntervalMs`, so none is held.
        harness.clock.advance(Millis(harness.hub.settings.presenceIntervalMs))
        let renamed = harness.send(b, "setPresence", ["document": .string(id), "name": "Robert"])
        let event = renamed.events(to: a, named: "presence").first
        #expect(event?["selection"] == ["anchor": 1, "head": 2])
        #expect(event?["name"] == "Robert")
        #expect(event?["color"] == "#f00")
        harness.clock.advance(Millis(harness.hub.settings.presenceIntervalMs))
        let hidden = harness.send(b, "setPresence", ["document": .string(id), "selection": .null])
        #expect(hidden.events(to: a, named: "presence").first?["selection"] == .null)
        #expect(hidden.events(to: a, named: "presence").first?["left"] == false)
    }

    @Test func presenceDisappearsWhenTheSceneClosesTheDocumentOrEnds() {
        var harness = HubHarness()
        let (a, b, id) = Self.setUp(&harness, text: "abc")
        let (c, _) = harness.connect(name: "carol")
        _ = harness.openDocument(c, id)
        _ = harness.request(b, "setPresence", Self.presence(id, anchor: 1, head: 1))
        _ = harness.request(c, "setPresence", Self.presence(id, anchor: 2, head: 2))

        let closed = harness.send(b, "closeDocument", ["document": .string(id)])
        let left = closed.events(to: a, named: "presence").first
        #expect(left?["left"] == true)
        #expect(left?["user"] == "bob")
        #expect(left?["selection"] == .null)
        #expect(closed.events(to: c, named: "presence").count == 1)

        let ended = harness.run(.closed(c, abnormal: true))
        #expect(ended.events(to: a, named: "presence").first?["left"] == true)
        #expect(ended.events(to: a, named: "presence").first?["user"] == "carol")

        let (d, _) = harness.connect(name: "dan")
        #expect(harness.openDocument(d, id)["result"]?["presence"] == [])
    }

    @Test func aSceneThatNeverSharedLeavesQuietly() {
        var harness = HubHarness()
        let (a, b, id) = Self.setUp(&harness, text: "abc")
        let closed = harness.send(b, "closeDocument", ["document": .string(id)])
        #expect(closed.events(to: a, named: "presence").isEmpty)
    }

    @Test func presenceNeedsTheDocumentOpenAndAUsableRevision() {
        var settings = Settings()
        settings.snapshotEvery = 1
        settings.operationLogRetention = 0
        settings.operationLogRetentionMs = 0  // by count only
        var harness = HubHarness(settings: settings)
        let (a, _, id) = Self.setUp(&harness, text: "abc")
        let (c, _) = harness.connect(name: "carol")
        #expect(harness.request(c, "setPresence", Self.presence(id, anchor: 0, head: 0)).errorCode == "document_not_open")
        #expect(harness.request(a, "setPresence", Self.presence(id, revision: 1, anchor: 0, head: 0)).errorCode
            == "revision_in_future")
        _ = harness.edit(a, id, revision: 0, [3, "d"], opId: "a:1")
        #expect(harness.request(a, "setPresence", Self.presence(id, revision: 0, anchor: 0, head: 0)).errorCode
            == "revision_unavailable")
        #expect(harness.request(a, "setPresence", Self.presence(id, revision: 1, anchor: 0, head: 0))["ok"] == true)
        #expect(harness.request(a, "setPresence", Self.presence(id, anchor: -1, head: 0)).errorCode == "invalid_field")
        #expect(harness.request(a, "setPresence", ["document": .string(id), "selection": ["anchor": 1]]).errorCode
            == "missing_field")
        #expect(harness.request(a, "setPresence", ["document": .string(id), "selection": 3]).errorCode == "invalid_field")
        #expect(harness.request(a, "setPresence", ["document": .string(id), "name": .string(String(repeating: "n", count: 65))])
            .errorCode == "invalid_field")
        #expect(harness.request(a, "setPresence", ["document": .string(id), "color": 7]).errorCode == "invalid_field")
    }
}
