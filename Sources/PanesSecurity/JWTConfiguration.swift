import Foundation
public import PanesCore

/// What `--auth jwt` trusts, read from the `--jwt-keys` file: the issuer and audience every
/// token must name, and the keys, each with its `kid` and algorithm, so a new key can be added
/// before tokens signed with it appear and the old one removed after they stop (rotation).
///
/// ```json
/// {"issuer": "https://app.example.com", "audience": "panes",
///  "keys": [{"kid": "2025-06", "alg": "HS256", "secret": "…at least 32 bytes…"},
///           {"kid": "rsa-1", "alg": "RS256", "publicKeyFile": "rsa-1.pub.pem"},
///           {"kid": "ec-1", "alg": "ES256", "publicKey": "-----BEGIN PUBLIC KEY-----\n…"}]}
/// ```
public struct JWTConfiguration: Sendable, Equatable {
    /// The `iss` every token must carry.
    public var issuer: String
    /// The `aud` every token must carry (alone or in its list): tokens the application signs
    /// for other services are refused here.
    public var audience: String
    /// Keys by `kid`, compared by bytes (RFC 7515 leaves `kid` opaque; `Identifier`).
    public var keys: [Identifier: JWTKey]

    public init(issuer: String, audience: String, keys: [JWTKey]) throws(PanesError) {
        guard !keys.isEmpty else { throw .invalid("keys", "must list at least one key") }
        var byID: [Identifier: JWTKey] = [:]
        for key in keys {
            guard byID[key.id] == nil else { throw .invalid("keys", "has two keys with kid `\(key.id)`") }
            byID[key.id] = key
        }
        self.issuer = issuer
        self.audience = audience
        self.keys = byID
    }

    /// Reads the key file's JSON. Unknown fields are refused so a typo never drops a check.
    /// - Parameter directory: where `publicKeyFile` paths are resolved (the key file's folder).
    public init(json: JSONValue, directory: String) throws(PanesError) {
        guard let object = json.objectValue else { throw .invalid("(file)", "must be a JSON object") }
        let fields = FieldReader(object)
        try fields.refuseUnknownKeys(["issuer", "audience", "keys"], what: "a known field")
        let issuer = try fields.requiredString("issuer", maxLength: 1024)
        let audience = try fields.requiredString("audience", maxLength: 1024)
        guard !issuer.isEmpty else { throw .invalid("issuer", "must not be empty") }
        guard !audience.isEmpty else { throw .invalid("audience", "must not be empty") }
        guard let list = try fields.array("keys") else { throw .missing("keys") }
        var keys: [JWTKey] = []
        for (index, entry) in list.enumerated() {
            keys.append(try Self.key(entry, at: "keys[\(index)]", directory: directory))
        }
        try self.init(issuer: issuer, audience: audience, keys: keys)
    }

    private static func key(_ entry: JSONValue, at path: String, directory: String) throws(PanesError) -> JWTKey {
        guard let object = entry.objectValue else { throw .invalid(path, "must be an object") }
        let fields = FieldReader(object, prefix: path)
        try fields.refuseUnknownKeys(["kid", "alg", "secret", "publicKey", "publicKeyFile"], what: "a known field")
        let id = try fields.requiredString("kid", maxLength: 128)
        guard !id.isEmpty else { throw .invalid(fields.path("kid"), "must not be empty") }
        guard let algorithm = try fields.choice("alg", JWTAlgorithm.self) else { throw .missing(fields.path("alg")) }
        let secret = try fields.string("secret", maxLength: 4096)
        let inline = try fields.string("publicKey", maxLength: 16_384)
        let file = try fields.string("publicKeyFile", maxLength: 4096)
        switch algorithm {
        case .hs256:
            guard let secret, inline == nil, file == nil else {
                throw .invalid(path, "an HS256 key needs `secret` and nothing else")
            }
            return try JWTKey(id: id, secret: Array(secret.utf8))
        case .rs256, .es256:
            guard secret == nil, (inline == nil) != (file == nil) else {
                throw .invalid(path, "an \(algorithm.rawValue) key needs one of `publicKey` (PEM text) or `publicKeyFile`")
            }
            var pem = inline ?? ""
            if let file {
                let url = URL(fileURLWithPath: file, relativeTo: URL(fileURLWithPath: directory, isDirectory: true))
                guard let data = FileManager.default.contents(atPath: url.path), let text = String(data: data, encoding: .utf8)
                else { throw .invalid(fields.path("publicKeyFile"), "cannot read \(url.path)") }
                pem = text
            }
            return try JWTKey(id: id, algorithm: algorithm, publicKeyPEM: pem)
        }
    }
}
