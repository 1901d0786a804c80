/// Everything the configuration file declares: settings, the scene manifest, registered
/// preference defaults, the operator's managed preferences and allowed browser origins.
///
/// ```json
/// { "settings": { "maxUserInfoBytes": 65536 },
///   "sceneConfigurations": [ { "name": "workspace", "kind": "browser", "activityTypes": ["panes.document"] } ],
///   "allowedOrigins": ["http://localhost:3000"] }
/// ```
public struct ServerConfiguration: Sendable {
    public var settings = Settings()
    public var sceneConfigurations = SceneConfiguration.defaults
    public var allowedOrigins: [String] = []
    public var preferenceDefaults = PreferenceDefaults.standard
    public var managedPreferences = ManagedPreferences()
    /// Receivers of webhooks (`"webhooks": [...]`, see `WebhookEndpoint`).
    public var webhookEndpoints: [WebhookEndpoint] = []

    public init() {}

    public init(json: JSONValue) throws(PanesError) {
        guard case .object(let object) = json else { throw .invalid("configuration", "must be a JSON object") }
        let fields = FieldReader(object)
        try fields.refuseUnknownKeys(["settings", "sceneConfigurations", "allowedOrigins", "preferenceDefaults",
                                      "managedPreferences", "webhooks"], what: "a configuration key")
        if let settingsObject = try fields.object("settings") { try settings.apply(settingsObject) }
        if let list = try fields.array("sceneConfigurations") {
            sceneConfigurations = try list.enumerated().map { index, entry throws(PanesError) in
                try SceneConfiguration(json: entry, field: "sceneConfigurations[\(index)]")
            }
            guard !sceneConfigurations.isEmpty else { throw .invalid("sceneConfigurations", "must not be empty") }
            // Names are identities: two that differ in their bytes are two (CONCEPTS.md, 10).
            var names = Set<Identifier>()
            for configuration in sceneConfigurations where !names.insert(Identifier(configuration.name)).inserted {
                throw .invalid("sceneConfigurations", "declares `\(configuration.name)` twice")
            }
        }
        if let defaults = fields.value("preferenceDefaults") {
            preferenceDefaults = try PreferenceDefaults(json: defaults)
        }
        if let managed = fields.value("managedPreferences") {
            managedPreferences = try ManagedPreferences(json: managed, defaults: preferenceDefaults)
        }
        webhookEndpoints = try (fields.array("webhooks") ?? []).enumerated().map { index, entry throws(PanesError) in
            try WebhookEndpoint(json: entry, field: "webhooks[\(index)]")
        }
        var endpointIDs = Set<Identifier>()
        for (index, endpoint) in webhookEndpoints.enumerated() where !endpointIDs.insert(Identifier(endpoint.id)).inserted {
            throw .invalid("webhooks[\(index)].id", "`\(endpoint.id)` is used twice")
        }
        allowedOrigins = try (fields.array("allowedOrigins") ?? []).enumerated().map { index, value throws(PanesError) in
            guard let origin = value.stringValue else { throw .invalid("allowedOrigins[\(index)]", "must be a string") }
            return origin
        }
    }
}
