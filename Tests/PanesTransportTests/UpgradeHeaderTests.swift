import PanesTestSupport
@testable import PanesTransport
import Testing

/// `Upgrade` and `Connection` are tokens HTTP compares in any ASCII case: clients send
/// `websocket`, `WebSocket`, `WEBSOCKET`, `Upgrade`, `upgrade`, `keep-alive, Upgrade`. The
/// upgrade's check compares the bytes lws holds (`WebSocketServer.equalsIgnoringASCIICase`).
@Suite struct UpgradeHeaderTests {
    @Test(arguments: ["websocket", "WebSocket", "WEBSOCKET", "wEbSoCkEt"])
    func theWordInAnyASCIICaseMatches(_ value: String) {
        #expect(Self.equals(value, "websocket"))
    }

    @Test(arguments: ["", "websocke", "websockets", " websocket", "web socket", "websocket\0", "websocked",
                      // The Kelvin sign is not ASCII K, whatever Unicode's case folding says.
                      "websoc\u{212A}et"])
    func anythingElseDoesNot(_ value: String) {
        #expect(!Self.equals(value, "websocket"))
    }

    /// Real upgrades with the values clients send, each in its case: answered 101, and the
    /// connection carries messages.
    @Test(arguments: zip(["websocket", "WebSocket", "WEBSOCKET", "wEbSoCkEt"],
                         ["Upgrade", "upgrade", "keep-alive, Upgrade", "UPGRADE"]))
    func upgradesSpelledInAnyCaseAreAccepted(_ upgrade: String, _ connection: String) throws {
        let harness = try TransportHarness(configuration: TransportConfiguration())
        var options = WebSocketClient.Options()
        options.upgrade = upgrade
        options.connection = connection
        let client = try harness.client(options)
        client.send("hello")
        #expect(harness.recorder.wait { $0.messages.map(\.text) == ["hello"] })
    }

    private static func equals(_ value: String, _ word: StaticString) -> Bool {
        var value = value
        return value.withUTF8 { WebSocketServer.equalsIgnoringASCIICase(UnsafeRawBufferPointer($0), word) }
    }
}
