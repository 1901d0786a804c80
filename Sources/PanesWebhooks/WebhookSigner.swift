// Threading: a value; safe from any thread (libcrypto's HMAC keeps no shared state).
import Foundation
public import PanesCore
import PanesSecurity

/// Signs a delivery the Standard Webhooks way (https://www.standardwebhooks.com): HMAC-SHA256
/// of `id.timestamp.body` under the endpoint's secret, sent as `webhook-signature: v1,<base64>`
/// beside `webhook-id` and `webhook-timestamp` (whole seconds since the epoch).
public struct WebhookSigner: Sendable {
    /// The secret's bytes (what follows `whsec_`, base64-decoded).
    public let key: [UInt8]

    /// Standard Webhooks asks for 24 to 64 random bytes.
    public static let keyBytes = 24...64

    /// - Parameter secret: `whsec_` and base64 (padding optional), as receivers' libraries take it.
    /// - Throws: `PanesError` naming `field` when the secret is not that.
    public init(secret: String, field: String = "secret") throws(PanesError) {
        var text = secret
        if text.hasPrefix("whsec_") { text.removeFirst(6) }
        let padded = text + String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: padded) else {
            throw .invalid(field, "must be `whsec_` followed by base64")
        }
        guard Self.keyBytes.contains(data.count) else {
            throw .invalid(field, "must hold \(Self.keyBytes.lowerBound) to \(Self.keyBytes.upperBound) bytes (it holds \(data.count))")
        }
        key = [UInt8](data)
    }

    /// `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`.
    public func signature(id: String, timestamp: Int64, body: [UInt8]) -> String {
        let signed = Array("\(id).\(timestamp).".utf8) + body
        return "v1," + Data(Digest.hmacSHA256(key: key, message: signed)).base64EncodedString()
    }

    /// The three headers of a delivery.
    public func headers(id: String, timestamp: Int64, body: [UInt8]) -> [(name: String, value: String)] {
        [("webhook-id", id), ("webhook-timestamp", String(timestamp)),
         ("webhook-signature", signature(id: id, timestamp: timestamp, body: body))]
    }

    /// Whether one of the space-separated signatures in `header` is this body's `v1` one,
    /// compared in constant time (what a receiver does; here for tests and tools).
    public func verify(id: String, timestamp: Int64, body: [UInt8], header: String) -> Bool {
        let expected = Array(signature(id: id, timestamp: timestamp, body: body).utf8)
        return header.split(separator: " ").contains { Digest.constantTimeEqual(Array($0.utf8), expected) }
    }
}
