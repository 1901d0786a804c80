@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// The sessions' tables behind `Sessions`: the owner index follows every insert and removal,
/// changes are made in place, and idle deadlines come from a session's last activity. The
/// hub's use of it is checked in HubSessionsTests and HubLifecycleTests.
@Suite struct SessionsTests {
    static let alice = OwnerKey(workspace: "w", user: "alice")
    static let bob = OwnerKey(workspace: "w", user: "bob")
    static let elsewhere = OwnerKey(workspace: "v", user: "alice")

    static func session(_ id: String, _ owner: OwnerKey = alice, lastActiveAt: Millis = 0) -> SceneSession {
        SceneSession(id: SessionID(id), secretHash: .unmatchable, owner: owner, role: .window, configuration: "Default",
                     createdAt: 0, lastActiveAt: lastActiveAt)
    }

    @Test func aSessionInsertedIsIndexedByItsOwnerAndOneRemovedLeavesTheIndex() {
        var sessions = Sessions(maxIdle: 100)
        sessions.insert(Self.session("a"))
        sessions.insert(Self.session("b"))
        sessions.insert(Self.session("c", Self.bob))
        sessions.insert(Self.session("d", Self.elsewhere))
        #expect(sessions.ids(of: Self.alice) == [SessionID("a"), SessionID("b")])
        #expect(sessions.count(of: Self.bob) == 1)
        #expect(Set(sessions.ids(inWorkspace: "w")) == [SessionID("a"), SessionID("b"), SessionID("c")])
        let removed = sessions.remove(SessionID("a"))
        #expect(removed?.id == SessionID("a"))
        #expect(sessions[SessionID("a")] == nil)
        #expect(sessions.ids(of: Self.alice) == [SessionID("b")])
        _ = sessions.remove(SessionID("b"))
        #expect(sessions.ids(of: Self.alice).isEmpty && sessions.count == 2)
    }

    /// The owner index keeps table slots, and a removed session's slot goes to the next one.
    @Test func aSessionInTheSlotOfOneRemovedIsIndexedByItsOwnOwner() {
        var sessions = Sessions(maxIdle: 100)
        sessions.insert(Self.session("a"))
        sessions.insert(Self.session("b"))
        _ = sessions.remove(SessionID("a"))
        sessions.insert(Self.session("c", Self.bob))
        #expect(sessions.ids(of: Self.alice) == [SessionID("b")] && sessions.ids(of: Self.bob) == [SessionID("c")])
        #expect(sessions.sessions(of: Self.bob).map(\.id) == [SessionID("c")] && sessions.count(of: Self.alice) == 1)
        #expect(sessions.remove(SessionID("a")) == nil && sessions.count == 2)
    }

    @Test func putReplacesTheCopyHeldAndInsertsOneNotHeld() {
        var sessions = Sessions(maxIdle: 100)
        var session = Self.session("a")
        sessions.put(session)
        #expect(sessions.ids(of: Self.alice) == [SessionID("a")], "a session new here is indexed")
        session.title = "Budget"
        sessions.put(session)
        #expect(sessions[SessionID("a")]?.title == "Budget")
        #expect(sessions.count == 1)
    }

    @Test func anIdentifierUsedAgainForAnotherOwnerMovesInTheIndex() {
        var sessions = Sessions(maxIdle: 100)
        sessions.insert(Self.session("a"))
        sessions.insert(Self.session("a", Self.bob))
        #expect(sessions.ids(of: Self.alice).isEmpty)
        #expect(sessions.ids(of: Self.bob) == [SessionID("a")])
    }

    @Test func changesAreMadeInPlaceAndNilForASessionNotHeld() {
        var sessions = Sessions(maxIdle: 100)
        sessions.insert(Self.session("a"))
        let title = sessions.update(SessionID("a")) { session -> String in
            session.title = "Notes"
            return session.title
        }
        let missing = sessions.update(SessionID("z")) { _ in true }
        #expect(title == "Notes" && sessions[SessionID("a")]?.title == "Notes")
        #expect(missing == nil)
    }

    @Test func aSessionBecomesIdleItsMaximumAfterItsLastActivity() {
        var sessions = Sessions(maxIdle: 100)
        sessions.insert(Self.session("a", lastActiveAt: 10))
        #expect(sessions.nextIdleDeadline == 110)
        let early = sessions.popIdle(now: 109)
        #expect(early.isEmpty)
        let due = sessions.popIdle(now: 110)
        #expect(due.map(\.id) == [SessionID("a")] && due.first?.deadline == 110)
        sessions.idleAgain(SessionID("a"), at: 200)
        var used = Self.session("a", lastActiveAt: 150)
        used.title = "used"
        sessions.becameIdle(used)
        #expect(sessions.nextIdleDeadline == 200)
        let next = sessions.popIdle(now: 250)
        #expect(next.map(\.deadline) == [200, 250])
    }

    /// A session made for a scene that attaches at once queues no idle deadline until that
    /// scene ends: no entry per live session (issue 27).
    @Test func aSessionInsertedForAnAttachingSceneIsIdleOnlyOnceItsSceneEnds() {
        var sessions = Sessions(maxIdle: 100)
        sessions.insert(Self.session("a", lastActiveAt: 10), attaching: true)
        #expect(sessions.nextIdleDeadline == nil && sessions.idleDeadlineCount == 0)
        #expect(sessions.ids(of: Self.alice) == [SessionID("a")])
        #expect(sessions.popIdle(now: 1_000).isEmpty)
        sessions.becameIdle(Self.session("a", lastActiveAt: 500))
        #expect(sessions.nextIdleDeadline == 600)
        #expect(sessions.popIdle(now: 600).map(\.id) == [SessionID("a")])
    }

    /// The hub: scenes that connect without a session hold no idle deadline while live, and
    /// the first that ends is queued (HubSessionsTests checks it is then discarded).
    @Test func newScenesQueueNoIdleDeadlineWhileLive() {
        var harness = HubHarness()
        var scenes: [ConnectionID] = []
        for i in 0..<50 { scenes.append(harness.connect(name: "user-\(i)").0) }
        #expect(harness.hub.sessions.count == 50 && harness.hub.sessions.idleDeadlineCount == 0)
        harness.run(.closed(scenes[0], abnormal: false))
        #expect(harness.hub.sessions.idleDeadlineCount == 1)
        #expect(harness.hub.sessions.nextIdleDeadline == harness.clock.now + Millis(Settings().sessionMaxIdleMs))
    }

    /// The same for a fork (a duplicated tab whose original answers the probe): its new session
    /// holds no idle deadline while its scene lives, and gets one when that scene ends.
    @Test func aForkQueuesNoIdleDeadlineWhileItsSceneLives() {
        var harness = HubHarness()
        let (original, result) = harness.connect()
        let duplicate = harness.open()
        _ = harness.send(duplicate, "connect", ["protocol": 1, "auth": ["name": "alice"],
                                                "session": HubHarness.credentials(result)])
        let forked = harness.run(.pong(original)).messages(to: duplicate).first?["result"]
        #expect(forked?["forkedFrom"] == result["session"]?["persistentIdentifier"])
        #expect(harness.hub.sessions.count == 2 && harness.hub.sessions.idleDeadlineCount == 0)
        harness.clock.advance(1_000)
        harness.run(.closed(duplicate, abnormal: false))
        #expect(harness.hub.sessions.idleDeadlineCount == 1)
        #expect(harness.hub.sessions.nextIdleDeadline == harness.clock.now + Millis(Settings().sessionMaxIdleMs))
    }

    @Test func anIdleEntryOfADiscardedSessionIsSkippedOrHandsOutTheSessionInItsPlace() {
        // Entries name a table slot: once its session is gone the entry is skipped, and once
        // another session takes the slot the entry hands that one out (the hub looks at it and
        // queues it again for its own deadline).
        var sessions = Sessions(maxIdle: 100)
        sessions.insert(Self.session("a", lastActiveAt: 10))
        sessions.insert(Self.session("b", lastActiveAt: 20))
        #expect(sessions.remove(SessionID("a")) != nil)
        let skipped = sessions.popIdle(now: 110)
        #expect(skipped.isEmpty && sessions.nextIdleDeadline == 120)
        sessions.insert(Self.session("c", lastActiveAt: 30))  // in a's slot
        #expect(sessions.remove(SessionID("b")) != nil)
        sessions.insert(Self.session("d", lastActiveAt: 60))  // in b's slot
        let due = sessions.popIdle(now: 130)
        #expect(due.map(\.id) == [SessionID("d"), SessionID("c")] && due.map(\.deadline) == [120, 130])
        #expect(sessions.nextIdleDeadline == 160)
        sessions.becameIdle(Self.session("gone", lastActiveAt: 0))
        sessions.idleAgain(SessionID("gone"), at: 1)
        #expect(sessions.nextIdleDeadline == 160)
    }
}
