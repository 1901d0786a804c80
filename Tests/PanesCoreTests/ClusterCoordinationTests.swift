@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// What a cluster node notes of its own writes while a record load is in flight: the sessions
/// it wrote or deleted, so that what the load read of them before those writes is not taken
/// over them (nor brings a deleted one back).
@Suite struct ClusterCoordinationTests {
    @Test func aSessionWrittenDuringARecordLoadIsNotedWhicheverCommandWroteIt() {
        var harness = HubHarness(node: NodeID("n1"))
        let owner = OwnerKey(workspace: "w", user: "alice")
        let (whole, liveness) = (Self.session("whole", owner), Self.session("liveness", owner))
        let coordination = harness.hub.coordination
        coordination.sessionsWritten(&harness.hub, [.putSession(whole), .putSessionLiveness(SessionLiveness(of: liveness))])
        #expect(harness.hub.cluster.writtenDuringRecordLoad.isEmpty, "no load in flight: nothing to note")
        harness.hub.cluster.recordsLoading = true
        coordination.sessionsWritten(&harness.hub, [.putSession(whole), .putSessionLiveness(SessionLiveness(of: liveness)),
                                                    .deleteSession(SessionID("x"))])
        #expect(harness.hub.cluster.writtenDuringRecordLoad == [whole.id, liveness.id, SessionID("x")])
    }

    private static func session(_ id: String, _ owner: OwnerKey) -> SceneSession {
        SceneSession(id: SessionID(id), secretHash: .unmatchable, owner: owner, role: .window, configuration: "Default",
                     createdAt: 0, lastActiveAt: 0)
    }
}
