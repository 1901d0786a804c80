import PanesCore
@testable import PanesSecurity
import PanesSecurityTestSupport
import Testing

/// RS256 and ES256 keys are parsed once, when the key file is read, and every check verifies
/// with the kept key (issue 26, item 5): a flood of tokens with random signatures costs a
/// verification each, never a PEM parse.
@Suite struct PublicKeyTests {
    static let now: Millis = 1_750_000_000_000

    static func keyFile() -> JSONValue {
        TokenSigner.keyFile([
            ["kid": "rs-1", "alg": "RS256", "publicKey": .string(TestKeys.rsa.publicPEM)],
            ["kid": "es-1", "alg": "ES256", "publicKey": .string(TestKeys.ec.publicPEM)],
        ])
    }

    /// A token of `kid` whose signature is `count` random bytes: what a flood sends.
    static func randomlySigned(kid: String, alg: String, count: Int) -> String {
        TokenSigner.assemble(header: ["alg": .string(alg), "typ": "JWT", "kid": .string(kid)],
                             claims: TokenSigner.claims(now: now),
                             signature: (0..<count).map { _ in UInt8.random(in: 0...255) })
    }

    @Test func keysAreParsedWhenTheFileIsReadAndNeverPerCheck() throws {
        let parses = PublicKey.ParseCount()
        try PublicKey.$parses.withValue(parses) {
            let configuration = try JWTConfiguration(json: Self.keyFile(), directory: "/")
            #expect(parses.value == 2, "each key is parsed (and checked) once, at start")
            // No cache: every token below reaches a signature check.
            let verifier = JWTVerifier(configuration: configuration, clockSkewMs: 0, cacheEntries: 0)
            let claims = TokenSigner.claims(now: Self.now)
            for _ in 0..<10 {
                let good = [TokenSigner.sign(claims, algorithm: "RS256", key: TestKeys.rsa.privatePEM, kid: "rs-1"),
                            TokenSigner.sign(claims, algorithm: "ES256", key: TestKeys.ec.privatePEM, kid: "es-1")]
                for token in good { #expect(try verifier.verify(token, now: Self.now).user == "alice") }
                for token in [Self.randomlySigned(kid: "rs-1", alg: "RS256", count: 256),
                              Self.randomlySigned(kid: "es-1", alg: "ES256", count: 64)] {
                    #expect(throws: PanesError.self) { try verifier.verify(token, now: Self.now) }
                }
            }
            #expect(parses.value == 2, "40 checks parsed no key again")
        }
    }

    @Test func theKeptKeyVerifiesExactlyWhatItSigned() throws {
        let configuration = try JWTConfiguration(json: Self.keyFile(), directory: "/")
        let rsa = try #require(configuration.keys["rs-1"]?.publicKey)
        let ec = try #require(configuration.keys["es-1"]?.publicKey)
        let token = TokenSigner.sign(TokenSigner.claims(now: Self.now), algorithm: "ES256", key: TestKeys.ec.privatePEM, kid: "es-1")
        let parts = try JWTParts(token)
        #expect(parts.signature.count == 64)
        #expect(ec.verifiesSHA256(parts.signature, of: parts.signingInput, rawECDSA: true))
        #expect(!ec.verifiesSHA256(parts.signature, of: parts.signingInput + [0], rawECDSA: true))
        #expect(!ec.verifiesSHA256(Array(parts.signature.dropLast()), of: parts.signingInput, rawECDSA: true),
                "an ES256 signature is 64 bytes, no other length")
        #expect(!rsa.verifiesSHA256(parts.signature, of: parts.signingInput, rawECDSA: false), "another key")
    }
}
