import PanesCore
import PanesCoreTestSupport
import Testing

/// Presence that says more (issue 26 §6): a bounded payload per scene, throttled per scene,
/// and the participants merged per person in the summary.
@Suite struct DocumentPresencePayloadTests {
    @Test func aScenesPayloadReachesTheOthersAndIsBounded() {
        var settings = Settings()
        settings.maxPresenceBytes = 32
        var harness = HubHarness(settings: settings)
        let (a, b, id) = DocumentPresenceTests.setUp(&harness, text: "hello")
        let produced = harness.send(b, "setPresence", ["document": .string(id), "data": ["typing": true]])
        #expect(produced.events(to: a, named: "presence").first?["data"] == ["typing": true])
        // Kept: a later presence without `data` still carries it, and a scene opening now gets it.
        harness.clock.advance(1_000)
        let moved = harness.send(b, "setPresence", DocumentPresenceTests.presence(id, anchor: 1, head: 1))
        #expect(moved.events(to: a, named: "presence").first?["data"] == ["typing": true])
        let (c, _) = harness.connect(name: "carol")
        let opened = harness.openDocument(c, id)
        #expect(opened["result"]?["presence"]?.arrayValue?.first?["data"] == ["typing": true])

        let large = harness.request(b, "setPresence", ["document": .string(id), "data": .string(String(repeating: "x", count: 40))])
        #expect(large["error"]?["code"] == "too_large")
        #expect(large["error"]?["message"]?.stringValue?.contains("maxPresenceBytes") == true)
        harness.clock.advance(1_000)
        let cleared = harness.send(b, "setPresence", ["document": .string(id), "data": .null])
        #expect(cleared.events(to: a, named: "presence").first?["data"] == .null)
    }

    @Test func presenceIsSentAtMostOncePerIntervalAndTheLatestWins() {
        var settings = Settings()
        settings.presenceIntervalMs = 100
        var harness = HubHarness(settings: settings)
        let (a, b, id) = DocumentPresenceTests.setUp(&harness, text: "hello")
        #expect(harness.send(b, "setPresence", DocumentPresenceTests.presence(id, anchor: 1, head: 1))
                    .events(to: a, named: "presence").count == 1)
        // Within the interval: answered, but held.
        for offset in Int64(2)...4 {
            harness.clock.advance(10)
            let produced = harness.send(b, "setPresence", DocumentPresenceTests.presence(id, anchor: offset, head: offset))
            #expect(produced.messages(to: b).last?["result"]?["selection"] == ["anchor": .int(offset), "head": .int(offset)])
            #expect(produced.events(to: a, named: "presence").isEmpty)
        }
        #expect(harness.hub.nextDeadline == harness.clock.now + 70)
        harness.clock.advance(70)
        let released = harness.run(.tick)
        #expect(released.events(to: a, named: "presence").map { $0["selection"] } == [["anchor": 4, "head": 4]])
        // A departure is never held.
        harness.clock.advance(10)
        _ = harness.send(b, "setPresence", DocumentPresenceTests.presence(id, anchor: 5, head: 5))
        let left = harness.send(b, "closeDocument", ["document": .string(id)])
        #expect(left.events(to: a, named: "presence").first?["left"] == true)
        harness.clock.advance(200)
        #expect(harness.run(.tick).events(to: a, named: "presence").isEmpty)
    }

    @Test func theSummaryMergesWindowsPerPersonAndCountsTheActiveOnes() {
        var harness = HubHarness()
        let (alice1, _) = harness.connect(name: "alice")
        let (alice2, _) = harness.connect(name: "alice")
        let (bob, _) = harness.connect(name: "bob")
        let id = harness.createDocument(alice1, text: "x")
        _ = harness.request(alice1, "lifecycle", ["visible": true, "focused": true])
        _ = harness.request(alice2, "lifecycle", ["visible": true, "focused": false])
        for connection in [alice1, alice2, bob] { _ = harness.openDocument(connection, id) }
        _ = harness.request(bob, "observeDocuments")
        let people = harness.request(bob, "observeDocuments")["result"]?["documents"]?.arrayValue?.first?["people"]
        #expect(people == [["user": "alice", "name": "alice", "windows": 2, "active": 1],
                           ["user": "bob", "name": "bob", "windows": 1, "active": 0]])
        // Alice's first window goes to the background: list observers hear it.
        let produced = harness.send(alice1, "lifecycle", ["visible": false, "focused": false])
        let changed = produced.events(to: bob, named: "documentsChanged").first
        #expect(changed?["change"] == "presence")
        #expect(changed?["document"]?["people"]?.arrayValue?.first == ["user": "alice", "name": "alice", "windows": 2, "active": 0])
    }
}
