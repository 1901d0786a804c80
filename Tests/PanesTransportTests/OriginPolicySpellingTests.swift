@testable import PanesTransport
import Testing

/// The upgrade's first look at `Host` and `Origin` compares their bytes with the allowed
/// spellings; it may only ever allow what the full check allows, and leaves the rest to it.
@Suite struct OriginPolicySpellingTests {
    static let policy = OriginConfiguration(publicURL: WebOrigin(url: "https://panes.example.com")!)
        .policy(bindHost: "127.0.0.1", port: 8080)

    static func allowsAsSpelled(origin: String?, host: String) -> Bool {
        Array(host.utf8).withUnsafeBytes { host in
            guard let origin else { return policy.allowsAsSpelled(origin: nil, host: host) }
            return Array(origin.utf8).withUnsafeBytes { policy.allowsAsSpelled(origin: $0, host: host) }
        }
    }

    @Test(arguments: [(String?.none, "127.0.0.1:8080"), ("http://127.0.0.1:8080", "127.0.0.1:8080"),
                      ("http://localhost:8080", "localhost:8080"), ("https://panes.example.com", "panes.example.com")])
    func exactSpellingsAreAllowedWithoutParsing(_ origin: String?, _ host: String) {
        #expect(Self.allowsAsSpelled(origin: origin, host: host))
        #expect(Self.policy.refusal(origin: origin, host: host) == nil)
    }

    @Test(arguments: [
        // Allowed, but only by the full check (case, default port spelled out).
        (String?.some("https://panes.example.com:443"), "PANES.example.com:443"),
        (nil, "LOCALHOST:8080"),
        // Refused.
        ("http://evil.example:8080", "evil.example:8080"), (nil, "evil.example:8080"), ("null", "127.0.0.1:8080"),
        ("", "127.0.0.1:8080"), ("http://127.0.0.1:8081", "127.0.0.1:8080"), ("http://127.0.0.1:8080", ""),
        ("http://127.0.0.1:8080 ", "127.0.0.1:8080"), (nil, "127.0.0.1:8080,evil.example"),
    ])
    func anythingElseIsLeftToTheFullCheck(_ origin: String?, _ host: String) {
        #expect(!Self.allowsAsSpelled(origin: origin, host: host))
    }
}
