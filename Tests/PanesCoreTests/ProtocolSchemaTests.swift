import Foundation
import PanesCore
import PanesCoreTestSupport
import Testing

/// PROTOCOL.schema.json, the server and PROTOCOL.md describe the same protocol: the same
/// request types, events and error codes. (That every frame the tests exchange matches the
/// schema is checked by scripts/check_frames.py.)
@Suite struct ProtocolSchemaTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")

    /// What the tests need of the schema, read once.
    struct Schema: Sendable {
        var draft = ""
        /// Request, result and event schemas by name (`#/$defs/requests/$defs/…`, …).
        var requests: [String: Shape] = [:]
        var results: Set<String> = []
        var events: [String: Shape] = [:]
        /// Error code to number and action (`#/$defs/errorCode`).
        var errors: [String: Code] = [:]
        /// The string enumerations of `#/$defs`, by name.
        var enums: [String: Set<String>] = [:]

        struct Shape: Sendable {
            var type: String?
            var required: [String]
            var closed: Bool
            /// Each property's own `enum`, where it has one.
            var enums: [String: Set<String>]
            /// What the request's `idempotencyKey` refers to.
            var key: String? = nil
        }

        struct Code: Sendable, Equatable {
            var number: Int
            var action: String
        }

        init() {}

        init(_ root: [String: Any]) {
            draft = root["$schema"] as? String ?? ""
            let defs = root["$defs"] as? [String: Any] ?? [:]
            func group(_ name: String) -> [String: [String: Any]] {
                (defs[name] as? [String: Any])?["$defs"] as? [String: [String: Any]] ?? [:]
            }
            requests = group("requests").mapValues(Self.shape)
            results = Set(group("results").keys)
            events = group("events").mapValues(Self.shape)
            for entry in (defs["errorCode"] as? [String: Any])?["oneOf"] as? [[String: Any]] ?? [] {
                let properties = entry["properties"] as? [String: [String: Any]] ?? [:]
                guard let code = properties["code"]?["const"] as? String, let number = properties["number"]?["const"] as? Int,
                      let action = properties["action"]?["const"] as? String
                else { continue }
                errors[code] = Code(number: number, action: action)
            }
            for (name, definition) in defs {
                if let values = (definition as? [String: Any])?["enum"] as? [String] { enums[name] = Set(values) }
            }
        }

        static func shape(_ schema: [String: Any]) -> Shape {
            let properties = schema["properties"] as? [String: [String: Any]] ?? [:]
            return Shape(type: properties["type"]?["const"] as? String, required: schema["required"] as? [String] ?? [],
                         closed: schema["additionalProperties"] as? Bool == false,
                         enums: properties.compactMapValues { ($0["enum"] as? [String]).map(Set.init) },
                         key: properties["idempotencyKey"]?["$ref"] as? String)
        }
    }

    static let schema: Schema = {
        guard let data = try? Data(contentsOf: repository.appendingPathComponent("PROTOCOL.schema.json")),
              let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return Schema() }
        return Schema(root)
    }()

    static let protocolText: String = {
        (try? String(contentsOf: repository.appendingPathComponent("PROTOCOL.md"), encoding: .utf8)) ?? ""
    }()

    /// Every event name the server's sources construct (`ServerEvent("name", …)`), read from the
    /// sources themselves, so an event added in any feature file is found.
    static let sentEvents: Set<String> = {
        let sources = repository.appendingPathComponent("Sources/PanesCore")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        var names: Set<String> = []
        for file in files {
            guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
            for match in text.matches(of: /ServerEvent\("([A-Za-z]+)"/) { names.insert(String(match.output.1)) }
        }
        return names
    }()

    @Test func theSchemaIsJSONSchema2020_12() {
        #expect(Self.schema.draft == "https://json-schema.org/draft/2020-12/schema")
        #expect(!Self.schema.requests.isEmpty && !Self.schema.events.isEmpty && !Self.schema.errors.isEmpty)
    }

    @Test func everyRegisteredRequestTypeHasARequestAndAResultSchemaAndNoOtherTypeDoes() {
        #expect(Set(Hub.requestTypes) == Set(Self.schema.requests.keys))
        #expect(Set(Hub.requestTypes) == Self.schema.results)
    }

    @Test func eachRequestSchemaNamesItsTypeRequiresTheEnvelopeAndIsClosed() {
        for (name, request) in Self.schema.requests {
            #expect(request.type == name, "request schema \(name)")
            #expect(request.required.starts(with: ["type", "id"]), "request schema \(name)")
            #expect(request.closed, "request schema \(name)")
        }
    }

    /// Every request takes the envelope's `idempotencyKey`; the schema says which keep an
    /// outcome for it, exactly those the server keys.
    @Test func theRequestsThatKeepAKeyedOutcomeAreTheServers() {
        for (name, request) in Self.schema.requests {
            #expect(request.key != nil, "request schema \(name) has no idempotencyKey")
        }
        let keyed = Set(Self.schema.requests.filter { $0.value.key == "#/$defs/idempotencyKey" }.keys)
        #expect(keyed == Set(Hub.keyedRequestTypes))
        #expect(keyed.count >= 10)
    }

    @Test func everyErrorCodeIsInTheSchemaWithItsNumberAndActionAndNoOtherIs() {
        #expect(Set(ErrorCode.allCases.map(\.rawValue)) == Set(Self.schema.errors.keys))
        for code in ErrorCode.allCases {
            #expect(Self.schema.errors[code.rawValue] == .init(number: code.number, action: code.action.rawValue),
                    "\(code.rawValue)")
        }
    }

    @Test func everyEventTheServerSendsIsInTheSchemaAndEverySchemaEventIsSent() {
        #expect(Self.sentEvents.count >= 10, "the sources were read")
        #expect(Self.sentEvents == Set(Self.schema.events.keys))
    }

    @Test func theSchemasEnumerationsAreTheServers() {
        let enums = Self.schema.enums
        #expect(enums["dismissalAnimation"] == Set(DismissalAnimation.allCases.map(\.rawValue)))
        #expect(enums["role"] == Set(Role.allCases.map(\.rawValue)))
        #expect(enums["activationState"] == Set(ActivationState.allCases.map(\.rawValue)))
        #expect(enums["sessionRole"] == Set(SceneConfiguration.SessionRole.allCases.map(\.rawValue)))
        #expect(enums["dragOperation"] == Set(DragOperation.allCases.map(\.rawValue)))
        #expect(enums["preferenceDomainName"] == Set(DomainKind.allCases.map(\.rawValue)))
        #expect(Self.schema.events["documentsChanged"]?.enums["change"]
                    == Set(ServerEvent.DocumentChange.allCases.map(\.rawValue)))
    }

    @Test func protocolDocumentMentionsEveryRequestEventAndErrorOfTheSchema() {
        let headings = Self.protocolText.split(separator: "\n").filter { $0.hasPrefix("### ") }
        for name in Self.schema.requests.keys {
            #expect(headings.contains { $0.contains("`\(name)`") }, "request \(name) has no section in PROTOCOL.md")
        }
        for name in Self.schema.events.keys {
            #expect(Self.protocolText.contains("| `\(name)` |"), "event \(name) is not in PROTOCOL.md's table of events")
        }
        for (code, entry) in Self.schema.errors {
            #expect(Self.protocolText.contains("| `\(code)` | \(entry.number) |"), "error \(code) is not in PROTOCOL.md")
        }
    }
}
