import Foundation
import PanesCore
import PanesJSON

/// A compact JWT split into its three parts and decoded, before anything is trusted.
///
/// Panes reads the header and the claims itself, with the same strict JSON reader as every
/// request (duplicate keys refused), rather than through libjwt, which keeps the last of
/// duplicate keys: what is checked is exactly what was signed, read one way.
struct JWTParts {
    let header: JSONObject
    let claims: JSONObject
    /// `BASE64URL(header) . BASE64URL(claims)`: the bytes the signature covers.
    let signingInput: [UInt8]
    let signature: [UInt8]

    init(_ token: String) throws(PanesError) {
        let segments = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            throw Self.refused("is not a compact JWT (three base64url parts separated by dots)")
        }
        guard let headerBytes = Base64URL.decode(segments[0]), let claimBytes = Base64URL.decode(segments[1]),
              let signature = Base64URL.decode(segments[2])
        else { throw Self.refused("has a part that is not unpadded base64url") }
        guard case .success(.object(let header)) = JSONCodec.decode(headerBytes) else {
            throw Self.refused("has a header that is not a JSON object")
        }
        guard case .success(.object(let claims)) = JSONCodec.decode(claimBytes) else {
            throw Self.refused("has claims that are not a JSON object")
        }
        self.header = header
        self.claims = claims
        self.signingInput = Array(segments[0]) + [UInt8(ascii: ".")] + Array(segments[1])
        self.signature = signature
    }

    static func refused(_ why: String) -> PanesError {
        PanesError(.unauthenticated, "the token \(why)")
    }
}

/// Base64url without padding (RFC 7515 §2), strictly: any other character fails.
enum Base64URL {
    static func decode(_ text: Substring.UTF8View) -> [UInt8]? {
        var standard = [UInt8]()
        standard.reserveCapacity(text.count + 3)
        for byte in text {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"):
                standard.append(byte)
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            default: return nil
            }
        }
        if standard.count % 4 == 1 { return nil }
        while standard.count % 4 != 0 { standard.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(standard)).map(Array.init)
    }
}
