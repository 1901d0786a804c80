@_spi(Testing) import PanesCore
import PanesCoreTestSupport
import Testing

/// The hub's two clocks: local deadlines (here a connect timeout) run on the monotonic one, so
/// setting the wall clock neither fires them early nor holds them back.
@Suite struct HubClocksTests {
    func hub(wall: TestClock, monotonic: TestClock) -> Hub {
        Hub(secretHasher: .reversed, now: { wall.now }, monotonic: { monotonic.now }, ids: .sequential())
    }

    func closes(_ effects: [Effect]) -> [CloseCode] {
        effects.compactMap { if case .close(_, let code, _) = $0 { code } else { nil } }
    }

    @Test func aConnectTimeoutIgnoresTheWallClockAndFollowsTheMonotonicOne() {
        let (wall, monotonic) = (TestClock(), TestClock())
        monotonic.advance(-1_699_000_000_000)
        var hub = hub(wall: wall, monotonic: monotonic)
        _ = hub.handle(.opened(ConnectionID(1)))
        let timeout = Millis(Settings().connectTimeoutMs)
        #expect(hub.nextDeadline == monotonic.now + timeout, "the deadline is on the monotonic clock")

        // The wall clock is set an hour ahead: nothing is due.
        wall.advance(3_600_000)
        #expect(closes(hub.handle(.tick)).isEmpty, "a wall-clock jump does not time the connect out")
        // And an hour back: the deadline does not move either.
        wall.advance(-7_200_000)
        #expect(hub.nextDeadline == monotonic.now + timeout)

        monotonic.advance(timeout + 1)
        #expect(closes(hub.handle(.tick)) == [.connectTimeout])
    }
}
