import PanesCore
import Testing

@Suite struct PreferenceDefaultsTests {
    @Test func theConfigurationFileDeclaresTypedDefaults() throws {
        let defaults = try PreferenceDefaults(json: ["user": ["ui.density": ["type": "string", "default": "cozy"]],
                                                     "workspace": ["ws.limit": ["type": "integer", "default": 3]]])
        #expect(defaults.registration(.user, try KeyPath("ui.density"))?.value == "cozy")
        #expect(defaults.registration(.workspace, try KeyPath("ws.limit"))?.type == .integer)
    }

    static let badFiles: [(JSONValue, String)] = [
        (["device": [:]], "must be `user` or `workspace`"),
        (["user": ["a": ["type": "colour", "default": 1]]], "must be one of"),
        (["user": ["a": ["type": "boolean", "default": 1]]], "is integer, not boolean"),
        (["user": ["a": ["type": "boolean"]]], "is required"),
        (["user": ["a": ["type": "boolean", "default": true], "a.b": ["type": "boolean", "default": true]]], "nest"),
    ]

    @Test(arguments: badFiles)
    func badDeclarationsAreRefusedWithAReason(_ json: JSONValue, reason: String) {
        #expect { try PreferenceDefaults(json: json) } throws: { error in
            (error as? PanesError)?.message.contains(reason) == true
        }
    }

    @Test func typesAdmitWhatTheirNameSays() {
        #expect(PreferenceDefaults.ValueType.integer.admits(3.0))
        #expect(!PreferenceDefaults.ValueType.integer.admits(3.5))
        #expect(PreferenceDefaults.ValueType.number.admits(3.5))
        #expect(!PreferenceDefaults.ValueType.string.admits(.null))
    }
}
