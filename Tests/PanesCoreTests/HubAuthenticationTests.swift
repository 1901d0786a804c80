import PanesCore
import PanesCoreTestSupport
import Synchronization
import Testing

/// A verifier that counts the tokens it is asked to check: the expensive part a flood aims at.
final class CountingVerifier: TokenVerifier {
    let inner: ListedTokens
    private let calls = Mutex(0)
    init(_ inner: ListedTokens) { self.inner = inner }
    var checks: Int { calls.withLock { $0 } }

    func verify(_ token: String, now: Millis) throws(PanesError) -> VerifiedToken {
        calls.withLock { $0 += 1 }
        return try inner.verify(token, now: now)
    }
}

/// Failed authentications are limited per peer address before they reach the verifier
/// (issue 26, item 5): past `authFailureBurst` a `connect` is refused unchecked with
/// `rate_limited` and closed with 4012, while other addresses connect as before.
@Suite struct HubAuthenticationTests {
    static let good = VerifiedToken(user: "alice", name: "Alice", workspaces: ["team": .editor], expiresAt: nil)

    static func harness() -> (HubHarness, CountingVerifier) {
        var settings = Settings()
        settings.authFailureBurst = 5
        settings.authFailuresPerMinute = 60
        let verifier = CountingVerifier(ListedTokens(tokens: ["good": good], skew: 0))
        return (HubHarness(settings: settings, authenticator: .verified(verifier)), verifier)
    }

    static func connect(_ harness: inout HubHarness, from peer: String, token: String) -> (ConnectionID, [Effect]) {
        let connection = harness.open(peer: peer)
        let effects = harness.send(connection, "connect", ["protocol": 1, "workspace": "team", "auth": ["token": .string(token)]])
        return (connection, effects)
    }

    @Test func aFloodFromOneAddressIsRefusedUncheckedAndClosedWith4012WhileOthersConnect() {
        var (harness, verifier) = Self.harness()
        for _ in 0..<5 {
            let (connection, effects) = Self.connect(&harness, from: "10.0.0.66", token: "forged")
            #expect(effects.messages(to: connection).last?.errorCode == "unauthenticated")
        }
        #expect(verifier.checks == 5)
        for _ in 0..<50 {
            let (connection, effects) = Self.connect(&harness, from: "10.0.0.66", token: "forged")
            let reply = effects.messages(to: connection).last
            #expect(reply?.errorCode == "rate_limited")
            #expect(reply?["error"]?["field"] == "auth.token")
            #expect((reply?["error"]?["retryAfterMs"]?.intValue ?? 0) > 0)
            #expect(effects.contains { if case .close(connection, .authenticationLimited, _) = $0 { true } else { false } })
        }
        #expect(verifier.checks == 5, "refused before the verifier: a lookup, not a signature check")
        // Even a good token from there waits: it cannot be told from a forged one unchecked.
        let (_, fromFlooder) = Self.connect(&harness, from: "10.0.0.66", token: "good")
        #expect(fromFlooder.contains { if case .close(_, .authenticationLimited, _) = $0 { true } else { false } })

        let (elsewhere, effects) = Self.connect(&harness, from: "10.0.0.7", token: "good")
        #expect(effects.messages(to: elsewhere).last?["ok"] == true)

        harness.clock.advance(1_000)
        let (later, again) = Self.connect(&harness, from: "10.0.0.66", token: "good")
        #expect(again.messages(to: later).last?["ok"] == true, "a second later the address has one attempt again")
    }

    @Test func aLimitedAddressIsTurnedAwayAtTheUpgradeAndOthersAreNot() {
        var (harness, _) = Self.harness()
        #expect(harness.hub.retryAfter(forPeer: "10.0.0.66") == nil)
        for _ in 0..<5 { _ = Self.connect(&harness, from: "10.0.0.66", token: "forged") }
        #expect((harness.hub.retryAfter(forPeer: "10.0.0.66") ?? 0) > 0)
        #expect(harness.hub.retryAfter(forPeer: "10.0.0.7") == nil)
        harness.clock.advance(1_000)
        #expect(harness.hub.retryAfter(forPeer: "10.0.0.66") == nil, "a second later: one more attempt")
        var open = HubHarness()
        #expect(open.hub.retryAfter(forPeer: "10.0.0.66") == nil, "open mode: nothing to limit")
    }

    @Test func anAddressIsClosedAtAcceptOnlyAfterItWasToldWhenToComeBack() {
        var (harness, _) = Self.harness()
        for _ in 0..<5 { _ = Self.connect(&harness, from: "10.0.0.66", token: "forged") }
        #expect(harness.hub.closesAtAccept(peer: "10.0.0.66") == false, "limited, but not told yet: it gets its 429")
        #expect(harness.hub.retryAfter(forPeer: "10.0.0.66") != nil)
        #expect(harness.hub.closesAtAccept(peer: "10.0.0.66") == true, "told, and back too soon")
        #expect(harness.hub.closesAtAccept(peer: "10.0.0.7") == false)
        harness.clock.advance(1_000)
        #expect(harness.hub.closesAtAccept(peer: "10.0.0.66") == false, "its time came: read and checked again")
        _ = Self.connect(&harness, from: "10.0.0.66", token: "forged")
        #expect(harness.hub.closesAtAccept(peer: "10.0.0.66") == false, "a new failure: told again before closed unread")
        let (_, refused) = Self.connect(&harness, from: "10.0.0.66", token: "forged")
        #expect(refused.contains { if case .close(_, .authenticationLimited, _) = $0 { true } else { false } })
        #expect(harness.hub.closesAtAccept(peer: "10.0.0.66") == true, "a rate_limited answer tells it too")
        var open = HubHarness()
        #expect(open.hub.closesAtAccept(peer: "10.0.0.66") == false, "open mode: nothing to limit")
    }

    @Test func goodCredentialsNeverCountAndOpenModeIsNeverLimited() {
        var (harness, verifier) = Self.harness()
        for _ in 0..<50 {
            let (connection, effects) = Self.connect(&harness, from: "10.0.0.7", token: "good")
            #expect(effects.messages(to: connection).last?["ok"] == true)
        }
        #expect(verifier.checks == 50)

        var settings = Settings()
        settings.authFailureBurst = 1
        var open = HubHarness(settings: settings)
        for _ in 0..<20 {
            let connection = open.open(peer: "10.0.0.66")
            #expect(open.request(connection, "connect", ["protocol": 1, "auth": ["name": "anyone"]])["ok"] == true)
        }
    }

    @Test func refreshTokenFailuresCountAndAreRefusedUncheckedTooWithoutClosingTheScene() {
        var (harness, verifier) = Self.harness()
        let (scene, effects) = Self.connect(&harness, from: "10.0.0.66", token: "good")
        #expect(effects.messages(to: scene).last?["ok"] == true)
        for _ in 0..<5 { #expect(harness.request(scene, "refreshToken", ["token": "forged"]).errorCode == "unauthenticated") }
        let checks = verifier.checks
        let limited = harness.request(scene, "refreshToken", ["token": "forged"])
        #expect(limited.errorCode == "rate_limited")
        #expect(limited["error"]?["field"] == "token")
        #expect(verifier.checks == checks)
        #expect(harness.request(scene, "ping")["ok"] == true, "the scene itself stays")
    }
}
