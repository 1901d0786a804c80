import PanesCore
import Synchronization

/// Outcomes of signature checks, by the SHA-256 of the token's bytes.
///
/// An RS256 or ES256 check costs a signature verification (the key itself is parsed once, when
/// the key file is read: `PublicKey`). A user's tabs share one token, and every reconnect sends
/// it again; the same bytes always check the same way, so the outcome is kept:
/// the claims of a good signature (time checks still run on every use), or the refusal of a
/// bad one. Bounded: when full it is emptied, which costs only re-checks.
///
/// Thread-safe (a mutex), though only the service thread uses it today.
final class VerificationCache: Sendable {
    enum Outcome: Sendable {
        /// The signature is good; these are the claims it covers.
        case signed(JSONObject)
        /// The header or signature is refused, whatever the time.
        case refused(PanesError)
    }

    let capacity: Int
    private let entries = Mutex<[[UInt8]: Outcome]>([:])
    /// Signatures actually checked (cache misses that got as far), for tests.
    private let checks = Mutex(0)

    init(capacity: Int) {
        self.capacity = capacity
    }

    var signatureChecks: Int { checks.withLock { $0 } }
    var count: Int { entries.withLock { $0.count } }

    /// The outcome for `token`, from the cache or from `check`, which is then remembered.
    func outcome(for token: String, _ check: () throws(PanesError) -> JSONObject) -> Outcome {
        guard capacity > 0 else { return Self.run(check) }
        let key = Digest.sha256(Array(token.utf8))
        if let known = entries.withLock({ $0[key] }) { return known }
        checks.withLock { $0 += 1 }
        let outcome = Self.run(check)
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = outcome
        }
        return outcome
    }

    private static func run(_ check: () throws(PanesError) -> JSONObject) -> Outcome {
        do {
            return .signed(try check())
        } catch {
            return .refused(error)
        }
    }
}
