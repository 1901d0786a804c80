// Threading: each call makes, uses and frees its own `jwt_t`; tests may call it from any thread.
import CJWT
import Foundation
public import PanesCore
import PanesJSON

/// Signs test tokens with libjwt, and builds the malformed and malicious ones by hand. Test
/// support only: the server never signs anything.
public enum TokenSigner {
    public static let issuer = "https://app.test"
    public static let audience = "panes-test"

    /// Claims for a valid token: `sub`, `name`, issuer, audience, `exp` an hour after `now`, and
    /// the workspaces. `overrides` replace or add claims; a `.null` override removes one.
    public static func claims(now: Millis, user: String = "alice", name: String = "Alice",
                              workspaces: [String: String] = ["team": "editor"],
                              overrides: JSONObject = [:]) -> JSONValue {
        var claims: JSONObject = [
            "iss": .string(issuer), "aud": .string(audience), "sub": .string(user), "name": .string(name),
            "iat": .int(now / 1000), "exp": .int(now / 1000 + 3600),
            "panes": ["workspaces": .object(JSONObject(workspaces.mapValues(JSONValue.string)))],
        ]
        for (key, value) in overrides {
            claims[key] = value == .null ? nil : value
        }
        return .object(claims)
    }

    /// A token signed by libjwt with `algorithm` (`HS256`, `RS256`, `ES256`) and `key` (the
    /// secret, or a private key's PEM), with `kid` in its header.
    public static func sign(_ claims: JSONValue, algorithm: String, key: [UInt8], kid: String?) -> String {
        var jwt: OpaquePointer?
        precondition(jwt_new(&jwt) == 0, "jwt_new failed")
        defer { jwt_free(jwt) }
        let alg = jwt_str_alg(algorithm)
        let set = key.withUnsafeBufferPointer { jwt_set_alg(jwt, alg, $0.baseAddress, Int32($0.count)) }
        precondition(set == 0, "jwt_set_alg(\(algorithm)) failed: \(set)")
        if let kid { precondition(jwt_add_header(jwt, "kid", kid) == 0, "jwt_add_header failed") }
        precondition(jwt_add_grants_json(jwt, JSONCodec.encodeString(claims)) == 0, "jwt_add_grants_json failed")
        guard let encoded = jwt_encode_str(jwt) else { preconditionFailure("jwt_encode_str failed (bad key?)") }
        defer { pjw_free_string(encoded) }
        return String(cString: encoded)
    }

    public static func sign(_ claims: JSONValue, algorithm: String, key: String, kid: String?) -> String {
        sign(claims, algorithm: algorithm, key: Array(key.utf8), kid: kid)
    }

    /// The same, with the claims as JSON text, for claims a `JSONValue` cannot hold (two keys
    /// that are canonically equivalent but differ in bytes).
    public static func sign(claimsText: String, algorithm: String, key: String, kid: String?) -> String {
        var jwt: OpaquePointer?
        precondition(jwt_new(&jwt) == 0, "jwt_new failed")
        defer { jwt_free(jwt) }
        let set = Array(key.utf8).withUnsafeBufferPointer { jwt_set_alg(jwt, jwt_str_alg(algorithm), $0.baseAddress, Int32($0.count)) }
        precondition(set == 0, "jwt_set_alg(\(algorithm)) failed: \(set)")
        if let kid { precondition(jwt_add_header(jwt, "kid", kid) == 0, "jwt_add_header failed") }
        precondition(jwt_add_grants_json(jwt, claimsText) == 0, "jwt_add_grants_json failed")
        guard let encoded = jwt_encode_str(jwt) else { preconditionFailure("jwt_encode_str failed (bad key?)") }
        defer { pjw_free_string(encoded) }
        return String(cString: encoded)
    }

    /// A token assembled from a header and claims as given, with `signature` (raw bytes) as its
    /// third part: for `alg: none`, odd headers and forged signatures.
    public static func assemble(header: JSONValue, claims: JSONValue, signature: [UInt8] = []) -> String {
        base64url(Array(JSONCodec.encodeString(header).utf8)) + "." + base64url(Array(JSONCodec.encodeString(claims).utf8))
            + "." + base64url(signature)
    }

    /// The token with its claims replaced by `claims`, keeping header and signature: a tampered payload.
    public static func replacingClaims(of token: String, with claims: JSONValue) -> String {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        return parts[0] + "." + base64url(Array(JSONCodec.encodeString(claims).utf8)) + "." + parts[2]
    }

    public static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A key file for `--auth jwt` with these keys, as JSON.
    public static func keyFile(_ keys: [JSONValue], issuer: String = issuer, audience: String = audience) -> JSONValue {
        ["issuer": .string(issuer), "audience": .string(audience), "keys": .array(keys)]
    }
}
