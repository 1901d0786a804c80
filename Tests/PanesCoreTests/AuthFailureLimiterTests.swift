@testable import PanesCore
import Testing

/// Failed authentications per peer address (issue 26, item 5): a burst, then a rate; only
/// failures count; memory stays bounded however many addresses fail.
@Suite struct AuthFailureLimiterTests {
    @Test func anAddressMayFailItsBurstThenWaitsForTheRate() {
        var limiter = AuthFailureLimiter(burst: 3, perMinute: 60, capacity: 100)
        let now: Millis = 1_000_000
        for _ in 0..<3 {
            #expect(limiter.refusal("10.0.0.1", now: now) == nil)
            limiter.failed("10.0.0.1", now: now)
        }
        #expect(limiter.refusal("10.0.0.1", now: now) == 1_000, "one a second: the next in a second")
        #expect(limiter.refusal("10.0.0.1", now: now + 400) == 600)
        #expect(limiter.refusal("10.0.0.1", now: now + 1_000) == nil)
        #expect(limiter.refusal("10.0.0.2", now: now) == nil, "another address has its own bucket")
        limiter.failed("10.0.0.1", now: now + 1_000)
        #expect(limiter.refusal("10.0.0.1", now: now + 1_000) == 1_000)
    }

    @Test func memoryStaysBoundedAndTheMostLimitedAddressIsKept() {
        var limiter = AuthFailureLimiter(burst: 2, perMinute: 1, capacity: 10)
        var now: Millis = 0
        // One address with an empty bucket: full again in two minutes.
        for _ in 0..<200 { limiter.failed("10.9.9.9", now: now) }
        // Many addresses failing once each, a second apart: each full again a minute later.
        for index in 0..<1_000 {
            now += 1_000
            limiter.failed("10.0.\(index / 256).\(index % 256)", now: now)
            #expect(limiter.count <= 10)
            if now < 60_000 {
                #expect(limiter.refusal("10.9.9.9", now: now) != nil, "kept: the others are nearer to full")
            }
        }
        #expect(limiter.refusal("10.9.9.9", now: 120_000) == nil, "full again: nothing to remember")
    }

    @Test func whenEveryRememberedAddressIsLimitedTheNearestToFullIsForgotten() {
        var limiter = AuthFailureLimiter(burst: 1, perMinute: 60, capacity: 3)
        // Three addresses, limited for 1 s, 2 s and 3 s.
        limiter.failed("a", now: 0)
        limiter.failed("b", now: 0); limiter.failed("b", now: 0)
        limiter.failed("c", now: 0); limiter.failed("c", now: 0); limiter.failed("c", now: 0)
        limiter.failed("d", now: 10)
        #expect(limiter.count == 3)
        #expect(limiter.refusal("a", now: 10) == nil, "forgotten: it was the nearest to full")
        #expect(limiter.refusal("b", now: 10) != nil)
        #expect(limiter.refusal("c", now: 10) != nil)
        #expect(limiter.refusal("d", now: 10) != nil)
    }
}
