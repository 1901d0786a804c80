import PanesCore
import PanesSecurity
import Testing

/// The server's identifiers and secrets from OpenSSL's generators: random, lower-case hex, of
/// the length each needs, from any thread.
@Suite struct IdentifierSourceOpenSSLTests {
    let hex = Set("0123456789abcdef")

    @Test func identifiersAndSecretsAreLowerCaseHexOfTheRightLength() {
        let ids = IdentifierSource.openSSL
        for _ in 0..<200 {
            let session = ids.sessionID().rawValue, secret = ids.secret(), scene = ids.token("scn_")
            #expect(session.count == 32 && session.allSatisfy(hex.contains))
            #expect(secret.count == 32 && secret.allSatisfy(hex.contains))
            #expect(scene.hasPrefix("scn_") && scene.count == 28 && scene.dropFirst(4).allSatisfy(hex.contains))
        }
    }

    /// 2,000 identifiers are 32 KB: eight of the pool's refills.
    @Test func identifiersAndSecretsNeverRepeatAndUseEveryDigitEverywhere() {
        let ids = IdentifierSource.openSSL
        for draws in [(0..<2_000).map { _ in ids.secret() }, (0..<2_000).map { _ in ids.sessionID().rawValue }] {
            #expect(Set(draws).count == draws.count)
            // Every digit turns up in every position over 2,000 draws (each misses with p < 1e-50).
            for position in 0..<32 {
                let digits = Set(draws.map { Array($0)[position] })
                #expect(digits.count == 16, "position \(position) saw \(digits.count) digits")
            }
        }
    }

    /// Threads draw from one pool, and from their own DRBGs seeded from the same primary one:
    /// threads drawing at once never make the same identifier (12-byte tokens also straddle
    /// the pool's refills).
    @Test func threadsDrawingAtOnceNeverMakeTheSameIdentifier() async {
        let ids = IdentifierSource.openSSL
        let drawn = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<1_000).map { _ in ids.token("scn_") } }
            }
            return await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(drawn.count == 8_000 && Set(drawn).count == 8_000)
    }
}
