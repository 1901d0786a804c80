import PanesCore
import Testing

/// `Optional.earlier`: the earliest of deadlines any of which may be absent, as the
/// `compactMap { $0 }.min()` it replaced in `Hub.nextDeadline` gave it.
@Suite struct OptionalEarlierTests {
    static let values: [Millis?] = [nil, .min, -1, 0, 1, 1, 50, .max]

    @Test func chainedItGivesTheMinimumOfThePresentOnesOrNil() {
        for a in Self.values {
            for b in Self.values {
                for c in Self.values {
                    #expect(a.earlier(b).earlier(c) == [a, b, c].compactMap { $0 }.min())
                }
            }
        }
        #expect(Millis?.none.earlier(nil) == nil)
    }
}
