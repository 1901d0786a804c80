import PanesCore
@testable import PanesSecurity
import PanesSecurityTestSupport
import Testing

/// The known attacks on JWT verification (issue 13, item 5), each refused, next to the valid
/// tokens that must pass, so a verifier that refused everything would fail too.
@Suite struct JWTVerifierTests {
    static let now: Millis = 1_750_000_000_000
    static let skew = 30_000

    static let verifier: JWTVerifier = {
        let configuration = try! JWTConfiguration(json: TokenSigner.keyFile([
            ["kid": "hs-1", "alg": "HS256", "secret": .string(TestKeys.secret)],
            ["kid": "hs-2", "alg": "HS256", "secret": "a-second-secret-for-rotation-0123456789"],
            ["kid": "rs-1", "alg": "RS256", "publicKey": .string(TestKeys.rsa.publicPEM)],
            ["kid": "es-1", "alg": "ES256", "publicKey": .string(TestKeys.ec.publicPEM)],
        ]), directory: "/")
        return JWTVerifier(configuration: configuration, clockSkewMs: skew)
    }()

    var now: Millis { Self.now }

    func claims(_ overrides: JSONObject = [:], workspaces: [String: String] = ["team": "editor"]) -> JSONValue {
        TokenSigner.claims(now: now, workspaces: workspaces, overrides: overrides)
    }

    func hs256(_ claims: JSONValue, kid: String? = "hs-1", secret: String = TestKeys.secret) -> String {
        TokenSigner.sign(claims, algorithm: "HS256", key: secret, kid: kid)
    }

    func rs256(_ claims: JSONValue, kid: String = "rs-1", key: TestKeyPair = TestKeys.rsa) -> String {
        TokenSigner.sign(claims, algorithm: "RS256", key: key.privatePEM, kid: kid)
    }

    func es256(_ claims: JSONValue, kid: String = "es-1", key: TestKeyPair = TestKeys.ec) -> String {
        TokenSigner.sign(claims, algorithm: "ES256", key: key.privatePEM, kid: kid)
    }

    /// The error the verifier throws for `token`, or nil if it accepted it.
    func refusal(_ token: String, at time: Millis? = nil) -> PanesError? {
        do {
            _ = try Self.verifier.verify(token, now: time ?? now)
            return nil
        } catch {
            return error
        }
    }

    func expectRefused(_ token: String, at time: Millis? = nil, _ code: ErrorCode = .unauthenticated, saying phrase: String,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        let error = refusal(token, at: time)
        #expect(error?.code == code, "accepted or wrong code: \(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.message.contains(phrase) == true, "\(String(describing: error))", sourceLocation: sourceLocation)
    }

    // MARK: Identity is bytes

    @Test func subjectsThatDifferOnlyInBytesStayApart() throws {
        let nfc = "jos\u{E9}", nfd = "jose\u{301}"
        let one = try Self.verifier.verify(hs256(TokenSigner.claims(now: now, user: nfc)), now: now)
        let other = try Self.verifier.verify(hs256(TokenSigner.claims(now: now, user: nfd)), now: now)
        #expect(Array(one.user.utf8) == Array(nfc.utf8))
        #expect(Array(other.user.utf8) == Array(nfd.utf8))
        #expect(!Identifier.equal(one.user, other.user))
    }

    @Test func keyIdsIssuerAndAudienceCompareByBytes() throws {
        let secret = "a-secret-of-at-least-thirty-two-bytes-0123456789"
        let configuration = try JWTConfiguration(json: TokenSigner.keyFile(
            [["kid": "k\u{E9}y", "alg": "HS256", "secret": .string(secret)]],
            issuer: "https://caf\u{E9}.test", audience: "pan\u{E9}s"), directory: "/")
        let verifier = JWTVerifier(configuration: configuration, clockSkewMs: Self.skew)
        let good: JSONObject = ["iss": "https://caf\u{E9}.test", "aud": "pan\u{E9}s"]
        let sign = { (kid: String, overrides: JSONObject) in
            TokenSigner.sign(TokenSigner.claims(now: self.now, overrides: overrides), algorithm: "HS256", key: secret, kid: kid)
        }
        #expect(throws: Never.self) { try verifier.verify(sign("k\u{E9}y", good), now: self.now) }
        let refusals = [
            sign("ke\u{301}y", good),
            sign("k\u{E9}y", good.merging(["iss": "https://cafe\u{301}.test"]) { $1 }),
            sign("k\u{E9}y", good.merging(["aud": "pane\u{301}s"]) { $1 }),
            sign("k\u{E9}y", good.merging(["aud": ["other", "pane\u{301}s"]]) { $1 }),
        ]
        for token in refusals {
            #expect(throws: PanesError.self) { try verifier.verify(token, now: self.now) }
        }
    }

    @Test func aWorkspacesClaimWithCanonicallyEquivalentKeysIsRefused() {
        // Read into a dictionary whose `String` keys compare canonically, one grant would
        // silently replace the other.
        let exp = now / 1000 + 3600
        let text = #"{"iss":"\#(TokenSigner.issuer)","aud":"\#(TokenSigner.audience)","sub":"alice","exp":\#(exp),"#
            + #""panes":{"workspaces":{"jos\#u{E9}":"viewer","jose\#u{301}":"owner"}}}"#
        let token = TokenSigner.sign(claimsText: text, algorithm: "HS256", key: TestKeys.secret, kid: "hs-1")
        expectRefused(token, saying: "claims that are not a JSON object")
    }

    // MARK: Valid tokens

    @Test func acceptsTokensSignedWithEachConfiguredKindOfKey() throws {
        for token in [hs256(claims()), hs256(claims(), kid: "hs-2", secret: "a-second-secret-for-rotation-0123456789"),
                      rs256(claims()), es256(claims())] {
            let verified = try Self.verifier.verify(token, now: now)
            #expect(verified == VerifiedToken(user: "alice", name: "Alice", workspaces: ["team": .editor],
                                              expiresAt: (now / 1000 + 3600) * 1000))
        }
    }

    @Test func readsEveryWorkspaceAndRoleAndDefaultsTheNameToTheUserID() throws {
        let token = rs256(claims(["name": .null, "sub": "u_42"], workspaces: ["team": "viewer", "acme": "owner"]))
        let verified = try Self.verifier.verify(token, now: now)
        #expect(verified.user == "u_42" && verified.name == "u_42")
        #expect(verified.workspaces == ["team": .viewer, "acme": .owner])
    }

    @Test func acceptsAnAudienceListThatContainsThisServer() throws {
        _ = try Self.verifier.verify(hs256(claims(["aud": ["other-service", .string(TokenSigner.audience)]])), now: now)
    }

    // MARK: Algorithm attacks

    @Test func refusesAnUnsignedTokenWhateverItsKidOrSpelling() {
        for alg in ["none", "None", "NONE", "nOnE"] {
            for kid: JSONValue in ["hs-1", "rs-1", .null] {
                let token = TokenSigner.assemble(header: ["alg": .string(alg), "typ": "JWT", "kid": kid], claims: claims())
                expectRefused(token, saying: "alg: none")
            }
        }
    }

    @Test func refusesAnRS256PublicKeyUsedAsAnHS256Secret() {
        // The attacker knows the public key (it is public) and HMACs with its PEM text.
        let forged = TokenSigner.sign(claims(["sub": "mallory"]), algorithm: "HS256", key: TestKeys.rsa.publicPEM, kid: "rs-1")
        expectRefused(forged, saying: "key `rs-1` is for RS256 only")
    }

    @Test func theSignatureCheckRefusesAlgorithmConfusionEvenIfTheHeaderCheckWereBypassed() throws {
        let forged = TokenSigner.sign(claims(["sub": "mallory"]), algorithm: "HS256", key: TestKeys.rsa.publicPEM, kid: "rs-1")
        let key = try #require(Self.verifier.configuration.keys["rs-1"])
        // This is why the check exists: libjwt alone verifies the forgery with the public key.
        #expect(JWTHandle(decoding: forged, key: Array(TestKeys.rsa.publicPEM.utf8)) != nil)
        #expect(throws: PanesError.self) { try JWTSignature.verify(forged, parts: JWTParts(forged), key: key) }
    }

    @Test func refusesAHeaderWhoseAlgDiffersFromItsKeysForEveryPair() {
        let tokens = [
            ("HS256", TokenSigner.sign(claims(), algorithm: "HS256", key: TestKeys.secret, kid: "rs-1")),
            ("HS256", TokenSigner.sign(claims(), algorithm: "HS256", key: TestKeys.secret, kid: "es-1")),
            ("RS256", rs256(claims(), kid: "hs-1")),
            ("RS256", rs256(claims(), kid: "es-1")),
            ("ES256", es256(claims(), kid: "rs-1")),
            ("HS512", TokenSigner.sign(claims(), algorithm: "HS512", key: TestKeys.secret, kid: "hs-1")),
            ("RS512", TokenSigner.sign(claims(), algorithm: "RS512", key: TestKeys.rsa.privatePEM, kid: "rs-1")),
        ]
        for (alg, token) in tokens { expectRefused(token, saying: "says `alg: \(alg)`") }
    }

    // MARK: Signatures and keys

    @Test func refusesAWrongSignatureForEachAlgorithm() {
        expectRefused(hs256(claims(), secret: "not-the-secret-but-long-enough-0123456789"), saying: "signature")
        expectRefused(rs256(claims(), key: TestKeys.otherRSA), saying: "signature")
        expectRefused(es256(claims(), key: TestKeys.ecP384), saying: "signature")
    }

    @Test func refusesATamperedPayloadForEachAlgorithm() {
        let promoted = claims(workspaces: ["team": "owner"])
        for token in [hs256(claims()), rs256(claims()), es256(claims())] {
            expectRefused(TokenSigner.replacingClaims(of: token, with: promoted), saying: "signature")
        }
    }

    @Test func refusesATruncatedOrEmptySignature() {
        let token = rs256(claims())
        expectRefused(String(token.dropLast(4)), saying: "signature")
        let unsigned = token.split(separator: ".").prefix(2).joined(separator: ".") + "."
        expectRefused(unsigned, saying: "signature")
    }

    @Test func refusesAnUnknownOrMissingKid() {
        expectRefused(hs256(claims(), kid: "hs-9"), saying: "names key `hs-9`, which is not configured")
        expectRefused(hs256(claims(), kid: nil), saying: "no `kid`")
    }

    @Test func refusesCriticalExtensionsAndOtherTypes() {
        let signed = { (header: JSONValue) -> String in
            let unsigned = TokenSigner.assemble(header: header, claims: claims())
            let input = unsigned.split(separator: ".").prefix(2).joined(separator: ".")
            return input + "." + TokenSigner.base64url(Digest.hmacSHA256(key: Array(TestKeys.secret.utf8), message: Array(input.utf8)))
        }
        // The same construction passes with a plain header, so the refusals below are about the header.
        #expect(refusal(signed(["alg": "HS256", "typ": "JWT", "kid": "hs-1"])) == nil)
        expectRefused(signed(["alg": "HS256", "kid": "hs-1", "crit": ["exp"]]), saying: "crit")
        expectRefused(signed(["alg": "HS256", "kid": "hs-1", "typ": "JWE"]), saying: "typ")
    }

    @Test func refusesDuplicateClaimsEvenWhenCorrectlySigned() {
        // libjwt would keep the last `sub`; Panes reads the claims itself and refuses the ambiguity.
        let header = TokenSigner.base64url(Array(#"{"alg":"HS256","typ":"JWT","kid":"hs-1"}"#.utf8))
        let exp = now / 1000 + 3600
        let body = TokenSigner.base64url(Array(("{\"iss\":\"\(TokenSigner.issuer)\",\"aud\":\"\(TokenSigner.audience)\","
            + "\"sub\":\"alice\",\"sub\":\"admin\",\"exp\":\(exp),\"panes\":{\"workspaces\":{\"team\":\"owner\"}}}").utf8))
        let input = header + "." + body
        let token = input + "." + TokenSigner.base64url(Digest.hmacSHA256(key: Array(TestKeys.secret.utf8), message: Array(input.utf8)))
        expectRefused(token, saying: "not a JSON object")
    }

    @Test func refusesTextThatIsNotACompactJWT() {
        for text in ["", "abc", "a.b", "a.b.c.d", "!!.??.**", "eyJ.eyJ.sig"] {
            #expect(refusal(text)?.code == .unauthenticated, "\(text)")
        }
    }

    // MARK: Claims

    @Test func refusesAWrongOrMissingAudience() {
        expectRefused(hs256(claims(["aud": "another-service"])), saying: "`aud`")
        expectRefused(hs256(claims(["aud": ["x", "y"]])), saying: "`aud`")
        expectRefused(hs256(claims(["aud": .null])), saying: "`aud`")
    }

    @Test func refusesAWrongOrMissingIssuer() {
        expectRefused(hs256(claims(["iss": "https://evil.test"])), saying: "`iss`")
        expectRefused(hs256(claims(["iss": .null])), saying: "`iss`")
    }

    @Test func refusesAnExpiredTokenWithItsOwnCodeAfterTheClockSkew() {
        let exp = now / 1000 + 60
        let token = hs256(claims(["exp": .int(exp)]))
        #expect(refusal(token, at: exp * 1000 - 1) == nil)
        #expect(refusal(token, at: exp * 1000 + Millis(Self.skew) - 1) == nil, "within the allowed skew")
        expectRefused(token, at: exp * 1000 + Millis(Self.skew), .tokenExpired, saying: "expired")
        expectRefused(hs256(claims(["exp": .null])), saying: "no `exp`")
        expectRefused(hs256(claims(["exp": "tomorrow"])), saying: "`exp`")
    }

    @Test func refusesATokenNotYetValidBeyondTheClockSkew() {
        let nbf = now / 1000 + 60
        let token = hs256(claims(["nbf": .int(nbf)]))
        #expect(refusal(token, at: nbf * 1000 - Millis(Self.skew)) == nil, "within the allowed skew")
        expectRefused(token, at: nbf * 1000 - Millis(Self.skew) - 1, saying: "not valid before")
    }

    @Test func refusesMissingOrUnusableUserWorkspacesAndRoles() {
        expectRefused(hs256(claims(["sub": .null])), saying: "no `sub`")
        expectRefused(hs256(claims(["sub": ""])), saying: "`sub`")
        expectRefused(hs256(claims(["sub": "alice\nadmin"])), saying: "control characters")
        expectRefused(hs256(claims(["sub": .string(String(repeating: "x", count: 129))])), saying: "`sub`")
        expectRefused(hs256(claims(["name": 42])), saying: "`name`")
        expectRefused(hs256(claims(["panes": .null])), saying: "`panes.workspaces`")
        expectRefused(hs256(claims(["panes": ["workspaces": ["team", "editor"]]])), saying: "`panes.workspaces`")
        expectRefused(hs256(claims(workspaces: ["team": "admin"])), saying: "not `owner`, `editor` or `viewer`")
    }
}

/// The service role: `panes.service` gives a token the backend's scope for the HTTP API, as an
/// API key's entry does; a token is a service's or a user's, never both.
@Suite struct JWTServiceRoleTests {
    let base = JWTVerifierTests()

    func service(_ value: JSONValue, workspaces: Bool = false) -> JSONValue {
        var panes: JSONObject = ["service": value]
        if workspaces { panes["workspaces"] = ["team": "owner"] }
        return base.claims(["panes": .object(panes), "sub": "crm-backend"])
    }

    @Test func aServiceTokenCarriesItsScopeAndNoUserWorkspaces() throws {
        let token = base.hs256(service(["workspaces": ["acme", "beta"], "access": "write"]))
        let verified = try JWTVerifierTests.verifier.verify(token, now: base.now)
        #expect(verified.service == APIScope(workspaces: ["acme", "beta"], access: .write))
        #expect(verified.workspaces.isEmpty && verified.user == "crm-backend")
        let reader = try JWTVerifierTests.verifier.verify(base.hs256(service(["workspaces": ["*"]])), now: base.now)
        #expect(reader.service == APIScope(workspaces: ["*"], access: .read))
        #expect(try JWTVerifierTests.verifier.verify(base.hs256(base.claims()), now: base.now).service == nil)
    }

    @Test func aServiceClaimThatIsWrongOrMixedWithAUsersIsRefused() {
        let bad: [JSONValue] = [
            service(["workspaces": ["acme"], "access": "write"], workspaces: true),
            service("yes"),
            service(["workspaces": []]),
            service(["workspaces": ["a b"]]),
            service(["workspaces": ["acme"], "access": "admin"]),
            service(["workspaces": ["acme"], "role": "owner"]),
        ]
        for claims in bad {
            let error = base.refusal(base.hs256(claims))
            #expect(error?.code == .unauthenticated, "\(claims)")
            #expect(error?.message.contains("panes.") == true, "\(error?.message ?? "accepted")")
        }
    }

    @Test func aServiceTokenCannotConnectAWindow() {
        let token = base.hs256(service(["workspaces": ["team"], "access": "write"]))
        let authenticator = Authenticator.verified(JWTVerifierTests.verifier)
        #expect(throws: PanesError.self) { try authenticator.authenticate(.token(token), workspace: "team", now: base.now) }
        do {
            _ = try authenticator.authenticate(.token(token), workspace: "team", now: base.now)
        } catch {
            #expect(error.code == .unauthenticated && error.message.contains("HTTP API"))
        }
    }
}
