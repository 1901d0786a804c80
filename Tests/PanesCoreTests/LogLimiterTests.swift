@testable import PanesCore
import Logging
import Testing

@Suite struct LogLimiterTests {
    @Test func aRepeatedLineIsLoggedOncePerIntervalWithTheCountLeftOut() {
        var limiter = LogLimiter(intervalMs: 1_000)
        #expect(limiter.admit("store down", now: 0) == 0)
        for t in 1..<1_000 { #expect(limiter.admit("store down", now: Millis(t)) == nil) }
        #expect(limiter.admit("other", now: 500) == 0, "each kind has its own interval")
        #expect(limiter.admit("store down", now: 1_000) == 999)
        #expect(limiter.admit("store down", now: 1_001) == nil)
        #expect(limiter.reset("store down") == 1)
        #expect(limiter.admit("store down", now: 1_002) == 0, "after a reset the next line goes at once")
    }
}

@Suite struct BackoffTests {
    @Test func aBackoffDoublesUpToItsMaximumAndStartsOverAfterASuccess() {
        var backoff = Backoff.sharedStore
        #expect(!backoff.isFailing)
        #expect((0..<8).map { _ in backoff.failed() } == [50, 100, 200, 400, 800, 1_600, 2_000, 2_000])
        backoff.succeeded()
        #expect(!backoff.isFailing)
        #expect(backoff.failed() == 50)
    }

    /// A caller that counts failures itself, one count per key (the held-drop read retry),
    /// waits what the same failure in a row waits.
    @Test func aCountedFailureWaitsWhatTheSameFailureInARowWaits() {
        var backoff = Backoff.sharedStore
        let inARow = (1...40).map { _ in backoff.failed() }
        #expect((1...40).map { Backoff.sharedStore.pause(afterFailures: $0) } == inARow)
    }
}
