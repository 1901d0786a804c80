@testable import PanesCore
import Testing

/// The live scenes' tables behind `Scenes`: at most one live scene per session, every index
/// and state count kept as scenes attach, change state and detach, the app state settled from
/// the counts, and token expiries queued and shed. The hub's use of it is checked in
/// HubLifecycleTests, HubConnectTests and HubTokenTests.
@Suite struct ScenesTests {
    static let alice = OwnerKey(workspace: "w", user: "alice")

    static func scene(_ id: String, session: String, owner: OwnerKey = alice, expiresAt: Millis? = nil) -> Scene {
        var scene = Scene(id: SceneID(id), connection: ConnectionID(1), session: SessionID(session), owner: owner,
                          userName: "Alice", role: .owner, traits: Traits(), clientVersion: "1")
        scene.tokenExpiresAt = expiresAt
        return scene
    }

    @Test func anAttachedSceneIsItsSessionsLiveSceneUntilItDetaches() {
        var scenes = Scenes(tokenSkew: 0)
        scenes.attach(Self.scene("s1", session: "a"))
        scenes.attach(Self.scene("s2", session: "b"))
        #expect(scenes.liveID(of: SessionID("a")) == SceneID("s1"))
        #expect(scenes.live(of: SessionID("b"))?.id == SceneID("s2"))
        #expect(scenes.ids(of: Self.alice) == [SceneID("s1"), SceneID("s2")])
        #expect(Set(scenes.liveSessions) == [SessionID("a"), SessionID("b")])
        let detached = scenes.detach(SceneID("s1"))
        #expect(detached?.session == SessionID("a"))
        #expect(!scenes.isLive(SessionID("a")) && scenes[SceneID("s1")] == nil)
        #expect(scenes.ids(of: Self.alice) == [SceneID("s2")])
        _ = scenes.detach(SceneID("s2"))
        #expect(scenes.owners.isEmpty && scenes.count == 0)
        // A session whose scene ended can have another.
        scenes.attach(Self.scene("s3", session: "a"))
        #expect(scenes.liveID(of: SessionID("a")) == SceneID("s3"))
    }

    /// The indexes keep table slots, and a detached scene's slot goes to the next scene: its
    /// session and its owner's set must name the new scene, and nothing of the old one stays.
    @Test func aSceneInTheSlotOfOneDetachedIsIndexedAsItselfAlone() {
        let bob = OwnerKey(workspace: "w", user: "bob")
        var scenes = Scenes(tokenSkew: 0)
        scenes.attach(Self.scene("s1", session: "a"))
        scenes.attach(Self.scene("s2", session: "b"))
        _ = scenes.detach(SceneID("s1"))
        scenes.attach(Self.scene("s3", session: "c", owner: bob))
        #expect(scenes.ids(of: Self.alice) == [SceneID("s2")] && scenes.ids(of: bob) == [SceneID("s3")])
        #expect(!scenes.isLive(SessionID("a")) && scenes.liveID(of: SessionID("c")) == SceneID("s3"))
        _ = scenes.setState(.foregroundActive, of: SceneID("s3"))
        #expect(scenes.settleAppState(of: bob)?.to == .foregroundActive)
        #expect(scenes.settleAppState(of: Self.alice)?.to == .unattached)
        // Detaching the old scene again finds nothing, and leaves the new one live.
        #expect(scenes.detach(SceneID("s1")) == nil && scenes.liveID(of: SessionID("c")) == SceneID("s3"))
    }

    @Test func theAppStateIsTheHighestStateOfTheUsersScenes() {
        var scenes = Scenes(tokenSkew: 0)
        scenes.attach(Self.scene("s1", session: "a"))
        scenes.attach(Self.scene("s2", session: "b"))
        #expect(scenes.settleAppState(of: Self.alice)?.to == .unattached)
        #expect(scenes.settleAppState(of: Self.alice) == nil, "unchanged")
        let moved = scenes.setState(.foregroundActive, of: SceneID("s1"))
        #expect(moved?.previous == .unattached && moved?.scene.state == .foregroundActive)
        scenes.update(SceneID("s2")) { $0.state = .background }
        #expect(scenes.settleAppState(of: Self.alice)?.to == .foregroundActive)
        _ = scenes.detach(SceneID("s1"))
        #expect(scenes.settleAppState(of: Self.alice)?.to == .background, "the count left with the scene")
        _ = scenes.detach(SceneID("s2"))
        // Gone from the index at once; the app state it leaves is only settled next.
        #expect(scenes.owners.isEmpty && scenes.ids(of: Self.alice).isEmpty)
        #expect(scenes.appState(of: Self.alice) == .background)
        let gone = scenes.settleAppState(of: Self.alice)
        #expect(gone?.from == .background && gone?.to == nil)
        #expect(scenes.appState(of: Self.alice) == nil)
        // A user who comes back starts from nothing: no count or state left behind.
        scenes.attach(Self.scene("s3", session: "c"))
        #expect(scenes.settleAppState(of: Self.alice).map { [$0.from, $0.to] } == [nil, .unattached])
    }

    @Test func eachUsersScenesAndAppStateAreTheirOwn() {
        let bob = OwnerKey(workspace: "w", user: "bob")
        var scenes = Scenes(tokenSkew: 0)
        scenes.attach(Self.scene("s1", session: "a"))
        scenes.attach(Self.scene("s2", session: "b", owner: bob))
        scenes.update(SceneID("s2")) { $0.state = .foregroundActive }
        #expect(scenes.settleAppState(of: Self.alice)?.to == .unattached)
        #expect(scenes.settleAppState(of: bob)?.to == .foregroundActive)
        #expect(scenes.ids(of: bob) == [SceneID("s2")] && scenes.owners == [Self.alice, bob])
        _ = scenes.detach(SceneID("s2"))
        #expect(scenes.settleAppState(of: bob)?.to == nil)
        #expect(scenes.appState(of: Self.alice) == .unattached && scenes.ids(of: Self.alice) == [SceneID("s1")])
    }

    @Test func aServiceSceneIsInNoIndexAndNoCount() {
        var scenes = Scenes(tokenSkew: 0)
        scenes.addService(Self.scene("api-1", session: ""))
        #expect(scenes[SceneID("api-1")] != nil)
        #expect(!scenes.isLive(SessionID("")) && scenes.owners.isEmpty)
        #expect(scenes.settleAppState(of: Self.alice) == nil)
        let removed = scenes.removeService(SceneID("api-1"))
        #expect(removed != nil && scenes.count == 0)
    }

    @Test func aTokenExpiresWithTheSkewOnceAndARefreshMovesIt() {
        var scenes = Scenes(tokenSkew: 10)
        scenes.attach(Self.scene("s1", session: "a", expiresAt: 100))
        scenes.attach(Self.scene("s2", session: "b", expiresAt: 100))
        #expect(scenes.nextTokenDeadline == 110)
        scenes.update(SceneID("s2")) { $0.tokenExpiresAt = 500 }
        let early = scenes.expiredTokens(now: 109)
        #expect(early.isEmpty)
        let due = scenes.expiredTokens(now: 110)
        #expect(due == [SceneID("s1")], "the refreshed scene's old entry is skipped")
        _ = scenes.detach(SceneID("s1"))
        let later = scenes.expiredTokens(now: 510)
        #expect(later == [SceneID("s2")])
    }

    /// 10,000 idle scenes are 10,000 of these; its two optional times are sentinels inside.
    @Test func aSceneIsSmallAndItsOptionalTimesReadBackAsSet() {
        #expect(MemoryLayout<Scene>.stride <= 136)
        var scene = Self.scene("s1", session: "a")
        #expect(scene.tokenExpiresAt == nil && scene.restoredAt == nil)
        scene.tokenExpiresAt = 0
        scene.restoredAt = 0
        #expect(scene.tokenExpiresAt == 0 && scene.restoredAt == 0)
        scene.tokenExpiresAt = .min
        scene.restoredAt = .max
        #expect(scene.tokenExpiresAt == .min && scene.restoredAt == .max)
        scene.tokenExpiresAt = nil
        scene.restoredAt = nil
        #expect(scene.tokenExpiresAt == nil && scene.restoredAt == nil)
    }
}
