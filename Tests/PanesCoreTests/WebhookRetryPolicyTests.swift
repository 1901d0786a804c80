import PanesCore
import Testing

/// When a failed webhook delivery goes again: backoff ×4 from `webhookRetryFirstMs` up to
/// `webhookRetryMaxMs`, half of each wait random, a receiver's `Retry-After` kept, and a last
/// attempt at the give-up time.
@Suite struct WebhookRetryPolicyTests {
    /// The defaults: 5 s, 20 s, 80 s… up to a day, for three days.
    let policy = WebhookRetryPolicy(settings: Settings())

    @Test func theWaitGrowsFourfoldUpToTheMaximumWithHalfOfItRandom() {
        let expected: [Int64] = [5_000, 20_000, 80_000, 320_000, 1_280_000, 5_120_000, 20_480_000, 81_920_000, 86_400_000,
                                 86_400_000]
        for (index, backoff) in expected.enumerated() {
            #expect(policy.next(afterAttempt: index + 1, firstAttemptAt: 0, now: 0, jitter: 0) == .retry(at: backoff / 2))
            guard case .retry(let latest) = policy.next(afterAttempt: index + 1, firstAttemptAt: 0, now: 0, jitter: 0.999_999) else {
                Issue.record("gave up after attempt \(index + 1)")
                continue
            }
            #expect(latest <= backoff && latest > backoff - backoff / 1_000, "attempt \(index + 1): \(latest)")
        }
        #expect(policy.next(afterAttempt: 200, firstAttemptAt: 0, now: 0, jitter: 0.5) == .retry(at: 64_800_000), "no overflow")
    }

    @Test func aRetryAfterIsKeptUpToTheMaximum() {
        #expect(policy.next(afterAttempt: 1, firstAttemptAt: 0, now: 100, retryAfterMs: 60_000, jitter: 0) == .retry(at: 60_100))
        #expect(policy.next(afterAttempt: 1, firstAttemptAt: 0, now: 100, retryAfterMs: 1, jitter: 0) == .retry(at: 2_600),
                "a shorter one does not shorten the backoff")
        #expect(policy.next(afterAttempt: 1, firstAttemptAt: 0, now: 0, retryAfterMs: 10 * 86_400_000, jitter: 0)
            == .retry(at: 86_400_000))
    }

    @Test func theLastAttemptIsAtTheGiveUpTimeAndAfterItItIsOver() {
        let day: Int64 = 86_400_000
        let giveUp = 3 * day
        #expect(policy.next(afterAttempt: 9, firstAttemptAt: 0, now: giveUp - 1_000, jitter: 1) == .retry(at: giveUp))
        #expect(policy.next(afterAttempt: 10, firstAttemptAt: 0, now: giveUp, jitter: 0) == .giveUp)
        #expect(policy.next(afterAttempt: 1, firstAttemptAt: 0, now: giveUp + 5, jitter: 0) == .giveUp)
    }
}
