import PanesCore
import Testing

/// The configuration file: names in it are their bytes (CONCEPTS.md, invariant 10). A key is
/// read by its bytes, so one that is only canonically a known one (KELVIN SIGN for `K`) must be
/// refused as unknown, never accepted and then not read; two names that differ in their bytes
/// are two names.
@Suite struct ServerConfigurationTests {
    static func refusal(_ json: JSONValue) -> PanesError? {
        do {
            _ = try ServerConfiguration(json: json)
            return nil
        } catch {
            return error
        }
    }

    static func sameBytes(_ a: String?, _ b: String) -> Bool { a.map { Array($0.utf8) == Array(b.utf8) } ?? false }

    @Test func aSettingSpelledWithKelvinSignIsNotASetting() throws {
        let twin = "maxPreference\u{212A}eys"
        let error = try #require(Self.refusal(["settings": .object([twin: 10])]))
        #expect(error.code == .invalidField)
        #expect(Self.sameBytes(error.field, "settings.\(twin)"), "named as written, not as maxPreferenceKeys")
        #expect(error.message.contains("is not a known setting, which holds U+212A KELVIN SIGN"))
        // Spelled in ASCII it is one.
        let configuration = try ServerConfiguration(json: ["settings": ["maxPreferenceKeys": 10]])
        #expect(configuration.settings.maxPreferenceKeys == 10)
    }

    /// A drop waiting for another node's answer holds its key's reservation, which another
    /// node takes over once older than `nodeLeaseMs`: a wait that long is refused at load, with
    /// both settings named, whichever order the file gives them in.
    @Test func aDropConfirmTimeoutNotUnderTheLeaseLessAHeartbeatIsRefused() throws {
        let error = try #require(Self.refusal(["settings": ["nodeLeaseMs": 1_500, "nodeHeartbeatMs": 250]]))
        #expect(error.code == .invalidField)
        #expect(error.field == "settings.dropConfirmTimeoutMs")
        #expect(error.message.contains("nodeLeaseMs − nodeHeartbeatMs (1500 − 250 ms)"), "\(error.message)")
        #expect(Self.refusal(["settings": ["dropConfirmTimeoutMs": 1_250, "nodeLeaseMs": 1_500, "nodeHeartbeatMs": 250]])
            != nil, "equal is refused too")
        let configuration = try ServerConfiguration(json: ["settings": [
            "nodeLeaseMs": 1_500, "nodeHeartbeatMs": 250, "dropConfirmTimeoutMs": 1_249,
        ]])
        #expect(configuration.settings.dropConfirmTimeoutMs == 1_249)
        #expect(Self.refusal(["settings": [:]]) == nil, "the defaults fit")
    }

    /// Before, a heartbeat of more than half the lease was taken (each was in its range): the
    /// node stopped serving `nodeLeaseMs − nodeHeartbeatMs` after a renewal, before the next
    /// one was sent, and closed every scene between any two renewals.
    @Test func aHeartbeatOverAThirdOfTheLeaseIsRefusedNamingBoth() throws {
        let error = try #require(Self.refusal(["settings": [
            "nodeLeaseMs": 1_500, "nodeHeartbeatMs": 1_000, "dropConfirmTimeoutMs": 100,
        ]]))
        #expect(error.code == .invalidField)
        #expect(error.field == "settings.nodeHeartbeatMs")
        #expect(error.message.contains("at most a third of nodeLeaseMs (1500 ms)"), "\(error.message)")
        #expect(error.message.contains("it is 1000"), "\(error.message)")
        #expect(Self.refusal(["settings": ["nodeLeaseMs": 1_500, "nodeHeartbeatMs": 501, "dropConfirmTimeoutMs": 100]])
            != nil, "just over a third is refused")
        let configuration = try ServerConfiguration(json: ["settings": [
            "nodeLeaseMs": 1_500, "nodeHeartbeatMs": 500, "dropConfirmTimeoutMs": 100,
        ]])
        #expect(configuration.settings.nodeHeartbeatMs == 500, "a third exactly is taken")
    }

    @Test func anUnknownTopLevelKeyIsNamedWithItsForeignCharacters() throws {
        let twin = "webhoo\u{212A}s"
        let error = try #require(Self.refusal([twin: []]))
        #expect(Self.sameBytes(error.field, twin))
        #expect(error.message.contains("is not a configuration key, which holds U+212A KELVIN SIGN (known: "))
    }

    @Test func sceneConfigurationNamesThatDifferInTheirBytesAreTwo() throws {
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        let configuration = try ServerConfiguration(json: ["sceneConfigurations": [
            ["name": .string(nfc), "activityTypes": ["a.one"]], ["name": .string(nfd), "activityTypes": ["a.two"]],
        ]])
        #expect(configuration.sceneConfigurations.map { Array($0.name.utf8) } == [Array(nfc.utf8), Array(nfd.utf8)])
        let error = try #require(Self.refusal(["sceneConfigurations": [
            ["name": .string(nfc), "activityTypes": ["a.one"]], ["name": .string(nfc), "activityTypes": ["a.two"]],
        ]]))
        #expect(error.field == "sceneConfigurations" && error.message.contains("twice"))
    }

    /// docs/operating.md: unknown keys in the configuration file are refused, a scene
    /// configuration's too (a misspelt `activityTypes` was read as none).
    @Test func aSceneConfigurationsUnknownKeyIsRefusedNamingIt() throws {
        let error = try #require(Self.refusal(["sceneConfigurations": [
            ["name": "kiosk", "activityTypes": ["a.one"]], ["name": "board", "activitytypes": ["a.two"]],
        ]]))
        #expect(error.field == "sceneConfigurations[1].activitytypes", "\(error)")
        #expect(error.message.contains("a scene configuration key") && error.message.contains("activityTypes"), "\(error)")
        #expect(Self.refusal(["sceneConfigurations": [
            ["name": "kiosk", "role": "window", "kind": "browser", "activityTypes": ["a.one"]],
        ]]) == nil)
    }

    @Test func webhookEndpointIdsAreUniqueByBytes() throws {
        let endpoint: (String) -> JSONValue = { id in
            ["id": .string(id), "url": "https://hooks.example/in", "secret": "whsec_0123456789abcdef0123456789abcdef"]
        }
        let error = try #require(Self.refusal(["webhooks": [endpoint("K-1"), endpoint("K-1")]]))
        #expect(error.field == "webhooks[1].id")
        // The twin is no endpoint id at all: ids are ASCII letters, digits, `_` and `-`.
        let twin = try #require(Self.refusal(["webhooks": [endpoint("K-1"), endpoint("\u{212A}-1")]]))
        #expect(twin.field == "webhooks[1].id" && twin.message.contains("letters, digits"))
    }

    @Test func anActivityTypeIsAcceptedByItsBytes() {
        let kiosk = SceneConfiguration(name: "kiosk", activityTypes: ["com.example.Kiosk", "org.example.*"])
        #expect(kiosk.accepts("com.example.Kiosk"))
        #expect(!kiosk.accepts("com.example.\u{212A}iosk"))
        #expect(kiosk.accepts("org.example.caf\u{E9}"))
        let nfc = SceneConfiguration(name: "c", activityTypes: ["caf\u{E9}"])
        #expect(!nfc.accepts("cafe\u{301}"))
    }
}
