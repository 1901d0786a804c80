import PanesCore
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
