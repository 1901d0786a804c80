@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// A hub alone on its store (`node == nil`) runs the single-node coordination: at every named
/// point it waits for nothing and emits nothing of a cluster's. Driven through every path that
/// calls a point (a new session, a resume after the window closed, a ticket, a refresh of a
/// session live nowhere, a drag dropped, cancelled and expired, a document opened, edited,
/// deleted, a preference written, ticks), the hub must never emit a cluster's channel or
/// command, a node signal or a node check; a point that leaked the cluster's code would.
@Suite struct SingleNodeCoordinationTests {
    static let item: JSONValue = ["activity": ["activityType": "panes.document", "title": "Event",
                                               "targetContentIdentifier": "doc_1"], "operations": ["copy", "move"]]

    @Test func aHubAloneChoosesTheSingleNodeCoordination() {
        #expect(HubHarness().hub.coordination is SingleNodeCoordination)
        #expect(HubHarness(node: NodeID("n1")).hub.coordination is ClusterCoordination)
    }

    @Test func aHubAloneNeverEmitsACommandOrChannelOfTheCluster() {
        var harness = HubHarness()
        _ = harness.start()
        // A new session, and a resume of it once its window closed (release, claim).
        let (first, made) = harness.connect()
        let session = made["session"]!["persistentIdentifier"]!
        _ = harness.run(.closed(first, abnormal: false))
        let (window, resumed) = harness.connect(["session": HubHarness.credentials(made)])
        #expect(resumed["created"] == false)
        let (other, _) = harness.connect()
        // A ticket for a new window, used.
        let ticket = harness.request(window, "requestActivation", ["activity": [
            "activityType": "panes.document", "targetContentIdentifier": "doc_9"]])["result"]!["ticket"]!
        let (opened, openedResult) = harness.connect(["ticket": ticket])
        // A refresh of a session live nowhere, and of a live one.
        let idle = openedResult["session"]!["persistentIdentifier"]!
        _ = harness.run(.closed(opened, abnormal: false))
        #expect(harness.request(other, "requestRefresh", ["session": idle, "title": "Later"])["error"] == nil)
        #expect(harness.request(other, "requestRefresh", ["session": session, "title": "Now"])["error"] == nil)
        // Drags: dropped, cancelled, expired.
        let dropped = harness.request(window, "beginDrag", ["items": [Self.item]])["result"]!["drag"]!
        let drop = harness.request(other, "drop", ["drag": dropped, "target": "scene", "operation": "copy"])
        #expect(drop["error"] == nil)
        let cancelled = harness.request(window, "beginDrag", ["items": [Self.item]])["result"]!["drag"]!
        #expect(harness.request(window, "cancelDrag", ["drag": cancelled])["error"] == nil)
        _ = harness.request(window, "beginDrag", ["items": [Self.item]])
        harness.clock.advance(Millis(Settings().dragLifetimeMs) + 1)
        _ = harness.run(.tick)
        // Documents: made, opened by two, edited, deleted; a preference written.
        let document = harness.createDocument(window, text: "abc")
        _ = harness.openDocument(window, document)
        _ = harness.openDocument(other, document)
        #expect(harness.edit(window, document, revision: 0, [3, "d"], opId: "w:1")["result"]?["revision"] == 1)
        let preference = harness.request(window, "setPreference", ["domain": "user", "keyPath": "theme", "value": "dark"])
        #expect(preference["error"] == nil)
        #expect(harness.request(window, "deleteDocument", ["document": .string(document)])["error"] == nil)
        // Time passes: idle sessions, probes, retries.
        harness.clock.advance(Millis(Settings().sessionMaxIdleMs) + 1)
        _ = harness.run(.tick)

        let leaked = harness.effects.filter(Self.isCluster)
        #expect(leaked.isEmpty, "effects only a cluster emits: \(leaked)")
        #expect(harness.hub.coordinationDeadline == nil)
    }

    /// Whether the effect is one only a cluster's coordination emits.
    static func isCluster(_ effect: Effect) -> Bool {
        switch effect {
        case .persist(let commands), .persistQuietly(let commands):
            commands.contains(where: isCluster)
        case .commit(let commit):
            if case .coordination = commit.channel { true } else { commit.commands.contains(where: isCluster) }
        case .signal, .checkNodes:
            true
        case .load(let request):
            switch request {
            case .preferenceChanges, .operations, .recordChanges, .reserveRequestKeys, .records: true
            default: false
            }
        default:
            false
        }
    }

    static func isCluster(_ command: StoreCommand) -> Bool {
        if case .coordination = command { true } else { false }
    }
}
