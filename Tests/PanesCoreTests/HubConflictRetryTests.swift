@_spi(Testing) @testable import PanesCore
import PanesCoreTestSupport
import Testing

/// `Hub.resolveConflict`: a commit that conflicted while the store holds its channel's lock
/// comes back with its retry as a value, never among the effects the runtime performs.
@Suite struct HubConflictRetryTests {
    @Test func theRetryComesBackAsAValueAndNotAmongTheEffects() throws {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "abc")
        nodes.a.completesCommits = false
        _ = nodes.a.send(onA, "edit", ["document": .string(document), "revision": 0, "operation": [1, "X", 2], "opId": "a1"])
        _ = nodes.a.send(onA, "edit", ["document": .string(document), "revision": 0, "operation": [2, "Z", 1], "opId": "a2"])
        _ = nodes.b.send(onB, "edit", ["document": .string(document), "revision": 0, "operation": [3, "Y"], "opId": "b1"])
        let conflicting = try #require(nodes.a.pendingCommits.first)
        let outcome = try nodes.a.store.apply([.commit(conflicting)])[conflicting.id]
        guard case .behind(let operations)? = outcome else {
            Issue.record("the store did not answer with b's operation: \(String(describing: outcome))")
            return
        }

        let resolved = nodes.a.hub.resolveConflict(conflicting, behind: operations)
        let retry = try #require(resolved.retry, "a's edits are retried at once, on the revision b made")
        #expect(retry.channel == conflicting.channel)
        #expect(retry.base == 1)
        #expect(retry.id != conflicting.id)
        #expect(!resolved.effects.contains { if case .commit = $0 { true } else { false } },
                "the retry is not also handed to the store the ordinary way: \(resolved.effects)")
        #expect(resolved.effects.events(to: onA, named: "documentOperation").map { $0["opId"] } == ["b1"])

        // The retry, written in the conflicting commit's place, commits; the next conflict on
        // another channel is not mistaken for this one's.
        #expect(try nodes.a.store.apply([.commit(retry)])[retry.id] == .committed)
        let after = nodes.a.hub.handle(.committed(retry.id, .committed))
        #expect(after.messages(to: onA).filter { $0["type"] == "reply" }.map { $0["result"]?["revision"] } == [2, 3])
    }
}
