import PanesCore
@testable import PanesSecurity
import PanesSecurityTestSupport
import Testing

/// Signature outcomes are remembered by token, never the time checks.
@Suite struct VerificationCacheTests {
    static let now: Millis = 1_750_000_000_000

    static func verifier(entries: Int) throws -> JWTVerifier {
        let configuration = try JWTConfiguration(json: TokenSigner.keyFile([
            ["kid": "rs-1", "alg": "RS256", "publicKey": .string(TestKeys.rsa.publicPEM)],
        ]), directory: "/")
        return JWTVerifier(configuration: configuration, clockSkewMs: 0, cacheEntries: entries)
    }

    static func token(user: String = "alice", expiresIn seconds: Int64 = 60) -> String {
        TokenSigner.sign(TokenSigner.claims(now: now, user: user, overrides: ["exp": .int(now / 1000 + seconds)]),
                         algorithm: "RS256", key: TestKeys.rsa.privatePEM, kid: "rs-1")
    }

    @Test func theSameTokenIsCheckedOnceAndAnotherTokenAgain() throws {
        let verifier = try Self.verifier(entries: 100)
        let token = Self.token()
        for _ in 0..<5 { #expect(try verifier.verify(token, now: Self.now).user == "alice") }
        #expect(verifier.cache.signatureChecks == 1)
        _ = try verifier.verify(Self.token(user: "bob"), now: Self.now)
        #expect(verifier.cache.signatureChecks == 2)
    }

    @Test func aRememberedTokenStillExpires() throws {
        let verifier = try Self.verifier(entries: 100)
        let token = Self.token(expiresIn: 60)
        _ = try verifier.verify(token, now: Self.now)
        #expect(throws: PanesError(.tokenExpired, "the token expired at \((Self.now / 1000 + 60) * 1000) (`exp`); "
                                       + "the server's clock says \(Self.now + 60_000)")) {
            try verifier.verify(token, now: Self.now + 60_000)
        }
        #expect(verifier.cache.signatureChecks == 1)
    }

    @Test func aRefusedSignatureStaysRefusedAndATamperedCopyIsCheckedAfresh() throws {
        let verifier = try Self.verifier(entries: 100)
        let forged = TokenSigner.sign(TokenSigner.claims(now: Self.now), algorithm: "RS256",
                                      key: TestKeys.otherRSA.privatePEM, kid: "rs-1")
        for _ in 0..<3 {
            #expect(throws: PanesError.self) { try verifier.verify(forged, now: Self.now) }
        }
        #expect(verifier.cache.signatureChecks == 1)
        // A good token's signature on other claims: different bytes, checked, refused.
        let tampered = TokenSigner.replacingClaims(of: Self.token(), with: TokenSigner.claims(now: Self.now, user: "mallory"))
        #expect(throws: PanesError.self) { try verifier.verify(tampered, now: Self.now) }
        #expect(verifier.cache.signatureChecks == 2)
    }

    @Test func theCacheIsBoundedAndCanBeTurnedOff() throws {
        let bounded = try Self.verifier(entries: 2)
        for user in ["a", "b", "c", "d", "e"] { _ = try bounded.verify(Self.token(user: user), now: Self.now) }
        #expect(bounded.cache.count <= 2)

        let off = try Self.verifier(entries: 0)
        let token = Self.token()
        for _ in 0..<3 { _ = try off.verify(token, now: Self.now) }
        #expect(off.cache.count == 0)
    }
}
