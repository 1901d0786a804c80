import PanesCore
import PanesCoreTestSupport
import Testing

/// What `Hub.handle` hands the runtime besides effects: the envelope of a frame it received
/// (`Hub.takeReceivedRequest`), which the decoder read, so the runtime times the reply without
/// reading the frame again; and the effects array's storage, taken back (`Hub.recycle`).
@Suite struct HubHandoverTests {
    static let frames: [(JSONValue, RequestID?, String?)] = [
        (["type": "ping", "id": 1], .int(1), "ping"),
        (["type": "ping", "id": "a"], .string("a"), "ping"),
        // Decoded as far as the envelope: still timed, under the type as sent.
        (["type": "setUserInfo", "id": 2, "userInfo": "x"], .int(2), "setUserInfo"),
        (["type": "teleport", "id": 3], .int(3), "teleport"),
        (["type": 7, "id": 4], .int(4), nil),
        // No usable `id`: nothing to time.
        (["type": "ping"], nil, nil),
        (["type": "ping", "id": 1.5], nil, nil),
        (JSONValue.array([]), nil, nil),
    ]

    @Test(arguments: frames)
    func theEnvelopeOfEachFrameIsTakenOnce(_ json: JSONValue, id: RequestID?, type: String?) {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        _ = harness.hub.takeReceivedRequest()
        harness.run(.received(scene, json))
        let taken = harness.hub.takeReceivedRequest()
        #expect(taken?.id == id)
        #expect(taken?.type == type)
        #expect(harness.hub.takeReceivedRequest() == nil, "taken once")
    }

    @Test func aFrameOnAClosedConnectionIsNotReported() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        harness.run(.closed(scene, abnormal: false))
        _ = harness.hub.takeReceivedRequest()
        harness.run(.received(scene, ["type": "ping", "id": 1]))
        #expect(harness.hub.takeReceivedRequest() == nil)
    }

    /// An array handed back is reused for the next event's effects, emptied first: nothing of
    /// the event it carried is performed again, whether its owner kept a copy or not.
    @Test func anEventsEffectsAreItsOwnAfterTheArrayBeforeIsRecycled() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        let first = harness.hub.handle(.received(scene, ["type": "ping", "id": 1]))
        #expect(first.messages(to: scene).map { $0["re"] } == [1])
        harness.hub.recycle(first)
        #expect(first.messages(to: scene).map { $0["re"] } == [1], "a copy kept is left as it was")
        let second = harness.hub.handle(.received(scene, ["type": "ping", "id": 2]))
        #expect(second.messages(to: scene).map { $0["re"] } == [2])
        harness.hub.recycle(consume second)  // the only reference: emptied in place
        let third = harness.hub.handle(.received(scene, ["type": "ping", "id": 3]))
        #expect(third.messages(to: scene).map { $0["re"] } == [3])
        #expect(harness.hub.handle(.tick).messages(to: scene).isEmpty)
    }
}
