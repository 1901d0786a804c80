import PanesTransport
import Testing

/// Origins parse strictly and compare the way browsers mean them.
@Suite struct WebOriginTests {
    @Test(arguments: [
        ("http://localhost:8080", "http://localhost:8080"),
        ("HTTP://LocalHost:8080", "http://localhost:8080"),
        ("http://example.com:80", "http://example.com"),
        ("https://example.com:443", "https://example.com"),
        ("https://example.com", "https://example.com"),
        ("http://[::1]:8080", "http://[::1]:8080"),
        ("http://127.0.0.1:3000", "http://127.0.0.1:3000"),
    ])
    func anOriginIsNormalised(_ text: String, _ normalised: String) {
        #expect(WebOrigin(text)?.description == normalised)
    }

    @Test(arguments: ["", "null", "localhost:8080", "//localhost", "ftp://example.com", "ws://example.com",
                      "http://", "http://:80", "http://example.com:", "http://example.com:0", "http://example.com:65536",
                      "http://example.com:8o", "http://example.com/", "http://example.com/path", "http://user@example.com",
                      "http://exa mple.com", "http://example.com?x", "http://-example.com", "http://example.com,http://b.com",
                      "http://[::1", "file:///etc/passwd",
                      // Fullwidth hex digits are hex digits to `Character`, not to an IPv6 literal.
                      "http://[\u{FF21}::1]:8080", "http://[::\u{FF11}]"])
    func aMalformedOriginIsRefused(_ text: String) {
        #expect(WebOrigin(text) == nil)
    }

    @Test func aPublicURLMayHaveAPathAndKeepsOnlyItsOrigin() {
        #expect(WebOrigin(url: "https://panes.example.com/app/")?.description == "https://panes.example.com")
        #expect(WebOrigin(url: "panes.example.com") == nil)
    }

    @Test func theServersOwnOriginsComeFromItsBindAddressNeverFromARequest() {
        let loopback = OriginConfiguration().policy(bindHost: "127.0.0.1", port: 8080)
        #expect(loopback.allowed.map(\.description) == ["http://127.0.0.1:8080", "http://localhost:8080"])
        let wildcard = OriginConfiguration().policy(bindHost: "0.0.0.0", port: 8080)
        #expect(wildcard.allowed.map(\.description) == ["http://0.0.0.0:8080"])
        // Another loopback address: `localhost` and 127.0.0.1 reach whatever listens on
        // 127.0.0.1, not this server, so pages from there are not its own.
        let otherLoopback = OriginConfiguration().policy(bindHost: "127.0.0.2", port: 8080)
        #expect(otherLoopback.allowed.map(\.description) == ["http://127.0.0.2:8080"])
        let proxied = OriginConfiguration(allowed: [WebOrigin("http://localhost:3000")!],
                                          publicURL: WebOrigin(url: "https://panes.example.com/")!)
            .policy(bindHost: "127.0.0.1", port: 8080)
        #expect(proxied.allowed.map(\.description)
            == ["https://panes.example.com", "http://127.0.0.1:8080", "http://localhost:8080", "http://localhost:3000"])
    }

    @Test func originMustMatchExactlyAndHostMustNameTheServer() {
        let policy = OriginConfiguration(publicURL: WebOrigin(url: "https://panes.example.com")!)
            .policy(bindHost: "127.0.0.1", port: 8080)
        // Allowed: no Origin (not a browser), the exact origin, a host name in any case.
        #expect(policy.refusal(origin: nil, host: "127.0.0.1:8080") == nil)
        #expect(policy.refusal(origin: "http://127.0.0.1:8080", host: "127.0.0.1:8080") == nil)
        #expect(policy.refusal(origin: "https://panes.example.com", host: "panes.example.com") == nil)
        #expect(policy.refusal(origin: "https://panes.example.com:443", host: "PANES.example.com:443") == nil)
        #expect(policy.refusal(origin: nil, host: "localhost:8080") == nil)
        // Refused: DNS rebinding (Host is the attacker's name, Origin matches it).
        #expect(policy.refusal(origin: "http://evil.example:8080", host: "evil.example:8080") != nil)
        #expect(policy.refusal(origin: nil, host: "evil.example:8080") != nil)
        // Refused: wrong scheme, wrong port, null, empty, no scheme, no Host at all.
        #expect(policy.refusal(origin: "https://127.0.0.1:8080", host: "127.0.0.1:8080") != nil)
        #expect(policy.refusal(origin: "http://panes.example.com", host: "127.0.0.1:8080") != nil)
        #expect(policy.refusal(origin: "http://127.0.0.1:8081", host: "127.0.0.1:8080") != nil)
        #expect(policy.refusal(origin: "null", host: "127.0.0.1:8080") != nil)
        #expect(policy.refusal(origin: "", host: "127.0.0.1:8080") != nil)
        #expect(policy.refusal(origin: "127.0.0.1:8080", host: "127.0.0.1:8080") != nil)
        #expect(policy.refusal(origin: nil, host: nil) != nil)
        #expect(policy.refusal(origin: nil, host: "127.0.0.1") != nil, "port 80 is not this server's")
        #expect(policy.refusal(origin: nil, host: "127.0.0.1:8080,evil.example") != nil)
    }
}
