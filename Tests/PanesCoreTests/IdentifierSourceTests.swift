@_spi(Testing) @testable import PanesCore
import PanesCoreTestSupport
import Testing

/// Identifiers and secrets: random, lower-case hex, of the length each needs.
@Suite struct IdentifierSourceTests {
    @Test func theSystemSourceMakesLowerCaseHexOfTheRightLength() {
        let ids = IdentifierSource.system
        let hex = Set("0123456789abcdef")
        for _ in 0..<200 {
            let session = ids.sessionID().rawValue, secret = ids.secret(), scene = ids.token("scn_")
            #expect(session.count == 32 && session.allSatisfy(hex.contains))
            #expect(secret.count == 32 && secret.allSatisfy(hex.contains))
            #expect(scene.hasPrefix("scn_") && scene.count == 28 && scene.dropFirst(4).allSatisfy(hex.contains))
        }
    }

    @Test func theSystemSourceNeverRepeatsItselfAndUsesEveryDigit() {
        let ids = IdentifierSource.system
        let secrets = (0..<2_000).map { _ in ids.secret() }
        #expect(Set(secrets).count == secrets.count)
        // Every digit turns up in every position over 2,000 draws (each misses with p < 1e-50).
        for position in 0..<32 {
            let digits = Set(secrets.map { Array($0)[position] })
            #expect(digits.count == 16, "position \(position) saw \(digits.count) digits")
        }
    }
}

/// What each kind of value is drawn from: identifiers from the generator for what is shown,
/// credentials (secrets, tickets) from the secrets' one, which a server keeps unpooled.
@Suite struct IdentifierSourceGeneratorTests {
    /// Identifiers random; every credential all `f`s, so where each came from shows.
    static let split = IdentifierSource(random: IdentifierSource.fillFromSystem,
                                        secret: { $0.initializeMemory(as: UInt8.self, repeating: 0xFF) })

    @Test func identifiersComeFromTheRandomGeneratorAndCredentialsFromTheSecretOne() {
        let ids = Self.split
        #expect(ids.sessionID().rawValue != String(repeating: "f", count: 32))
        #expect(ids.token("scn_") != "scn_" + String(repeating: "f", count: 24))
        #expect(ids.secret() == String(repeating: "f", count: 32))
        #expect(ids.bearerToken("tkt_") == "tkt_" + String(repeating: "f", count: 24))
    }

    /// `token` writes its prefix and the digits into one string itself: the bytes it shows are
    /// the generator's, in order, after the prefix, whatever the prefix's length.
    @Test func aTokenIsItsPrefixThenTheGeneratorsBytesInHex() {
        let ids = IdentifierSource(random: { buffer in
            for index in buffer.indices { buffer[index] = UInt8(0xA0 + index) }
        }, secret: IdentifierSource.fillFromSystem)
        #expect(ids.token("scn_") == "scn_a0a1a2a3a4a5a6a7a8a9aaab")
        #expect(ids.token("") == "a0a1a2a3a4a5a6a7a8a9aaab")
        #expect(ids.token("événement_") == "événement_a0a1a2a3a4a5a6a7a8a9aaab")
    }

    /// `sceneID` packs the generator's bytes without writing them out: the same scene id as the
    /// token of the same bytes, from a source with a generator and from one without.
    @Test func aScenesIdentifierIsTheScnTokenOfTheSameBytes() {
        let ids = IdentifierSource(random: { buffer in
            for index in buffer.indices { buffer[index] = UInt8(0xA0 + index) }
        }, secret: IdentifierSource.fillFromSystem)
        #expect(ids.sceneID() == SceneID("scn_a0a1a2a3a4a5a6a7a8a9aaab"))
        #expect(ids.sceneID().rawValue == ids.token("scn_"))
        let counting = IdentifierSource.sequential(from: 41)
        #expect(counting.sceneID().rawValue == "scn_" + String(repeating: "0", count: 22) + "2a")
        for _ in 0..<200 {
            let scene = IdentifierSource.system.sceneID().rawValue
            #expect(scene.hasPrefix("scn_") && scene.utf8.count == 28 && SceneID(scene).bytes.isPacked)
        }
    }

    @Test func aHubMakesAWindowsTicketFromTheSecretGenerator() {
        var harness = HubHarness(ids: Self.split)
        let (scene, _) = harness.connect()
        let effects = harness.send(scene, "requestActivation", ["activity": HubWindowsTests.document])
        let result = effects.messages(to: scene).last!["result"]!
        #expect(result["ticket"]?.stringValue == "tkt_" + String(repeating: "f", count: 24))
    }
}
