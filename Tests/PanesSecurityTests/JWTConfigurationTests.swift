import Foundation
import PanesCore
import PanesSecurity
import PanesSecurityTestSupport
import Testing

@Suite struct JWTConfigurationTests {
    func load(_ keys: [JSONValue], directory: String = "/nonexistent") throws(PanesError) -> JWTConfiguration {
        try JWTConfiguration(json: TokenSigner.keyFile(keys), directory: directory)
    }

    @Test func readsHS256RS256AndES256KeysEachUnderItsKid() throws {
        let configuration = try load([
            ["kid": "h1", "alg": "HS256", "secret": .string(TestKeys.secret)],
            ["kid": "r1", "alg": "RS256", "publicKey": .string(TestKeys.rsa.publicPEM)],
            ["kid": "e1", "alg": "ES256", "publicKey": .string(TestKeys.ec.publicPEM)],
        ])
        #expect(configuration.issuer == TokenSigner.issuer && configuration.audience == TokenSigner.audience)
        #expect(configuration.keys.mapValues(\.algorithm) == ["h1": .hs256, "r1": .rs256, "e1": .es256])
    }

    @Test func readsAPublicKeyFileNextToTheKeyFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("panes-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try TestKeys.rsa.publicPEM.write(to: folder.appendingPathComponent("rsa.pem"), atomically: true, encoding: .utf8)
        let configuration = try load([["kid": "r1", "alg": "RS256", "publicKeyFile": "rsa.pem"]], directory: folder.path)
        #expect(configuration.keys["r1"]?.algorithm == .rs256)
    }

    /// A key that must be refused, the field the error names, and a phrase of its message.
    struct Refused: Sendable, CustomTestStringConvertible {
        let key: JSONValue
        let field: String
        let phrase: String
        var testDescription: String { phrase }

        init(_ key: JSONObject, _ field: String, _ phrase: String) {
            self.key = .object(key)
            self.field = field
            self.phrase = phrase
        }
    }

    static let refused: [Refused] = [
        Refused(["kid": "h", "alg": "HS256", "secret": "too-short"], "keys.h.secret", "at least 32"),
        Refused(["kid": "r", "alg": "RS256", "publicKey": .string(TestKeys.weakRSA.publicPEM)], "keys.r.publicKey", "1024-bit"),
        Refused(["kid": "e", "alg": "ES256", "publicKey": .string(TestKeys.ecP384.publicPEM)], "keys.e.publicKey", "P-256"),
        Refused(["kid": "e", "alg": "ES256", "publicKey": .string(TestKeys.rsa.publicPEM)], "keys.e.publicKey", "not an EC"),
        Refused(["kid": "r", "alg": "RS256", "publicKey": .string(TestKeys.ec.publicPEM)], "keys.r.publicKey", "not an RSA"),
        Refused(["kid": "r", "alg": "RS256", "publicKey": .string(TestKeys.ed25519.publicPEM)], "keys.r.publicKey", "not an RSA"),
        Refused(["kid": "r", "alg": "RS256", "publicKey": .string(TestKeys.rsa.privatePEM)], "keys.r.publicKey", "private key"),
        Refused(["kid": "r", "alg": "RS256", "secret": .string(TestKeys.secret)], "keys[0]", "publicKey"),
        Refused(["kid": "h", "alg": "HS256", "publicKey": .string(TestKeys.rsa.publicPEM)], "keys[0]", "`secret`"),
        Refused(["kid": "n", "alg": "none", "secret": .string(TestKeys.secret)], "keys[0].alg", "HS256"),
        Refused(["kid": "h", "alg": "HS256", "secret": .string(TestKeys.secret), "algorithm": "HS256"], "keys[0].algorithm",
                "not a known field"),
    ]

    @Test(arguments: Self.refused)
    func refusesAKeyThatCannotBeTrustedNamingTheField(_ refused: Refused) {
        #expect {
            try load([refused.key])
        } throws: { error in
            guard let error = error as? PanesError else { return false }
            return error.code == .invalidField && error.field == refused.field && error.message.contains(refused.phrase)
        }
    }

    /// A field spelled with KELVIN SIGN for its `K` is canonically `publicKeyFile`, but fields
    /// are read by their bytes: it would be accepted and never read. It is unknown, named as
    /// written, with the character that is not ASCII.
    @Test func aFieldSpelledWithACanonicalTwinIsRefusedAsUnknown() {
        let twin = "public\u{212A}eyFile"
        let key: JSONValue = ["kid": "h", "alg": "HS256", "secret": .string(TestKeys.secret), twin: "rsa.pem"]
        #expect {
            try load([key])
        } throws: { error in
            guard let error = error as? PanesError, let field = error.field else { return false }
            return error.code == .invalidField && Array(field.utf8) == Array("keys[0].\(twin)".utf8)
                && error.message.contains("U+212A KELVIN SIGN")
        }
    }

    @Test func refusesTwoKeysWithOneKidAndAFileWithoutKeysIssuerOrAudience() {
        let key: JSONValue = ["kid": "h", "alg": "HS256", "secret": .string(TestKeys.secret)]
        #expect(throws: PanesError.self) { try load([key, key]) }
        #expect(throws: PanesError.self) { try load([]) }
        #expect(throws: PanesError.self) {
            try JWTConfiguration(json: ["audience": "a", "keys": [key]], directory: "/")
        }
        #expect(throws: PanesError.self) {
            try JWTConfiguration(json: ["issuer": "i", "keys": [key]], directory: "/")
        }
    }
}
