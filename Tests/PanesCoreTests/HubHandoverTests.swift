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
        // Decoded as far as the envelope: still timed, under its type.
        (["type": "setUserInfo", "id": 2, "userInfo": "x"], .int(2), "setUserInfo"),
        // A type that names no request: timed, under none.
        (["type": "teleport", "id": 3], .int(3), nil),
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
        #expect(taken?.typeIndex.map { Hub.requestTypes[$0] } == type)
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

/// Requests are counted by type (`panes_messages_in_total`): the protocol's by their type's
/// index, anything else by name, and the two read back as one table.
@Suite struct HubRequestCountTests {
    @Test func eachTypeIsCountedUnderItsNameAndUndecodedOnesTogether() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        harness.run(.received(scene, ["type": "ping", "id": 1]))
        harness.run(.received(scene, ["type": "ping", "id": 2]))
        harness.run(.received(scene, ["type": "setUserInfo", "id": 3, "userInfo": ["k": 1]]))
        // Known type, bad field; unknown type; no type: all three "(invalid)".
        harness.run(.received(scene, ["type": "setUserInfo", "id": 4, "userInfo": "x"]))
        harness.run(.received(scene, ["type": "teleport", "id": 5]))
        harness.run(.received(scene, ["type": 7, "id": 6]))
        #expect(harness.hub.metrics.requests == ["connect": 1, "ping": 2, "setUserInfo": 1, "(invalid)": 3])
        let text = harness.hub.metricsText()
        #expect(text.contains(#"panes_messages_in_total{type="ping"} 2"#))
        #expect(text.contains(#"panes_messages_in_total{type="(invalid)"} 3"#))
        #expect(!text.contains(#"type="teleport""#), "a client's text never becomes a label")
    }
}
