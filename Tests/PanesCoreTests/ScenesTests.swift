@testable import PanesCore
import Testing

/// The live scenes' tables behind `Scenes`: at most one live scene per session, every index
/// and state count kept as scenes attach, change state and detach, the app state settled from
/// the counts, and token expiries queued and shed. The hub's use of it is checked in
/// HubLifecycleTests, HubConnectTests and HubTokenTests.
@Suite struct ScenesTests {
    static let alice = OwnerKey(workspace: "w", user: "alice")

    static func scene(_ id: String, session: String, owner: OwnerKey = alice, expiresAt: Millis? = nil,
                      name: String = "Alice", client: String = "1") -> Scene {
        var scene = Scene(id: SceneID(id), connection: ConnectionID(1), session: SessionID(session), owner: owner,
                          userName: name, role: .owner, traits: Traits(), clientVersion: client)
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
        #expect(MemoryLayout<Scene>.stride <= 80 && MemoryLayout<Scene?>.stride <= 80)
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

    /// A user's scenes with the same name and client version hold one `SceneUser` (8 bytes a
    /// scene instead of four strings). One whose name or version differs, by one byte or as a
    /// canonically equivalent string, keeps its own and reads back its own bytes; a name changed
    /// in place changes that scene's alone; a detached scene's end leaves the others' intact.
    @Test func aUsersScenesShareWhatTheyHoldByBytesAndEachReadsItsOwn() {
        let (composed, decomposed) = ("Zo\u{E9}", "Zoe\u{301}")
        let bob = OwnerKey(workspace: "w", user: "bob")
        var scenes = Scenes(tokenSkew: 0)
        scenes.attach(Self.scene("s1", session: "a"))
        scenes.attach(Self.scene("s2", session: "b"))
        scenes.attach(Self.scene("s3", session: "c", name: composed))
        scenes.attach(Self.scene("s4", session: "d", name: decomposed))
        scenes.attach(Self.scene("s7", session: "g", name: decomposed))
        scenes.attach(Self.scene("s5", session: "e", name: decomposed, client: "1 "))
        scenes.attach(Self.scene("s6", session: "f", owner: bob, name: decomposed, client: "1 "))
        let scene = { (id: String) in scenes[SceneID(id)]! }
        #expect(scene("s1").user === scene("s2").user)
        #expect(scene("s4").user === scene("s7").user)
        #expect(scene("s3").user !== scene("s4").user && scene("s4").user !== scene("s5").user)
        #expect(Array(scene("s3").userName.utf8) == Array(composed.utf8))
        #expect(Array(scene("s4").userName.utf8) == Array(decomposed.utf8))
        #expect(scene("s5").clientVersion == "1 " && scene("s4").clientVersion == "1")
        #expect(scene("s6").owner == bob && scene("s5").owner == Self.alice && scene("s6").user !== scene("s5").user)

        scenes.update(SceneID("s2")) { $0.userName = "Alice B." }
        #expect(scene("s2").userName == "Alice B." && scene("s1").userName == "Alice")
        #expect(scene("s2").owner == Self.alice && scene("s2").clientVersion == "1")
        scenes.update(SceneID("s4")) { $0.userName = decomposed }
        #expect(scene("s4").user === scene("s7").user, "the same name again keeps the shared one")
        scenes.update(SceneID("s4")) { $0.userName = composed }
        #expect(Array(scene("s4").userName.utf8) == Array(composed.utf8) && scene("s4").user !== scene("s3").user)
        #expect(Array(scene("s7").userName.utf8) == Array(decomposed.utf8))

        _ = scenes.detach(SceneID("s7"))
        _ = scenes.detach(SceneID("s1"))
        #expect(Array(scene("s4").userName.utf8) == Array(composed.utf8) && scene("s4").owner == Self.alice)
        #expect(scene("s2").userName == "Alice B." && scene("s5").clientVersion == "1 ")
        // The owner's entry keeps the last one it was handed (s5's) for the next scene.
        scenes.attach(Self.scene("s8", session: "h", name: decomposed, client: "1 "))
        #expect(scene("s8").user === scene("s5").user && scene("s8").clientVersion == "1 ")
    }
}

extension Scenes {
    /// Attaches a scene made whole beforehand, as the hub attaches one it makes in
    /// `attach(owner:userName:clientVersion:settling:_:)`: the same scene, holding the user
    /// `Scenes` hands it.
    @discardableResult
    mutating func attach(_ scene: Scene, settling: Bool = false) -> AppStateChange? {
        attach(owner: scene.owner, userName: scene.userName, clientVersion: scene.clientVersion, settling: settling) { user in
            var attached = Scene(id: scene.id, connection: scene.connection, session: scene.session, user: user,
                                 role: scene.role, traits: scene.traits)
            attached.state = scene.state
            attached.tokenExpiresAt = scene.tokenExpiresAt
            attached.restoredAt = scene.restoredAt
            return attached
        }
    }
}
