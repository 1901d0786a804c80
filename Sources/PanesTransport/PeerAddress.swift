// Threading: pure functions over text and bytes (inet_pton and inet_ntop on local buffers); any thread.
#if canImport(Glibc)
import Glibc
#endif

/// Where a connection comes from, as the limit on failed authentications counts it: the
/// socket's peer address, or, when that peer is a proxy the operator trusts
/// (`--trusted-proxy`), the client address the proxy put in `X-Forwarded-For`.
///
/// Addresses are normalised so one client is one key: IPv4 as dotted quads (IPv4-mapped IPv6
/// too), IPv6 by its /64 prefix (`2001:db8:1:2::/64`), since one host holds a whole /64 and
/// would otherwise have 2^64 addresses to fail from.
public enum PeerAddress {
    /// The key for an address in text (`10.0.0.7`, `::ffff:10.0.0.7`, `2001:db8::1`); nil when
    /// the text is not an IP address.
    public static func normalized(_ text: String) -> String? {
        let trimmed = text.trimmingSpaces
        var v4 = in_addr()
        if inet_pton(AF_INET, trimmed, &v4) == 1 {
            // A dotted quad as `key(address:)` writes it (no leading zeros) is already the key.
            return isCanonicalDottedQuad(trimmed) ? trimmed : withUnsafeBytes(of: &v4) { key(address: $0) }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, trimmed, &v6) == 1 else { return nil }
        return withUnsafeBytes(of: &v6) { key(address: $0) }
    }

    /// The key for an address given as its bytes in network order, as a socket gives it: 4 for
    /// IPv4, 16 for IPv6; nil for any other length. Every accepted connection comes through
    /// here, so a dotted quad is written by hand (inet_ntop's goes through printf).
    public static func key(address bytes: UnsafeRawBufferPointer) -> String? {
        switch bytes.count {
        case 4:
            return dottedQuad(bytes)
        case 16:
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return dottedQuad(UnsafeRawBufferPointer(rebasing: bytes[12..<16]))
            }
            var prefix = in6_addr()
            withUnsafeMutableBytes(of: &prefix) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<8])) }
            return format(AF_INET6, &prefix).map { $0 + "/64" }
        default:
            return nil
        }
    }

    /// Four bytes as decimal octets joined by dots, without leading zeros (at most 15 bytes: a
    /// small string, nothing allocated).
    private static func dottedQuad(_ octets: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: 15) { buffer in
            var count = 0
            for (position, octet) in octets.enumerated() {
                if position > 0 {
                    buffer[count] = UInt8(ascii: ".")
                    count += 1
                }
                if octet >= 100 {
                    buffer[count] = UInt8(ascii: "0") + octet / 100
                    count += 1
                }
                if octet >= 10 {
                    buffer[count] = UInt8(ascii: "0") + octet / 10 % 10
                    count += 1
                }
                buffer[count] = UInt8(ascii: "0") + octet % 10
                count += 1
            }
            return count
        }
    }

    /// The client a connection counts as.
    /// - Parameters:
    ///   - socketPeer: the address the connection comes from, as the socket says.
    ///   - forwardedFor: the request's `X-Forwarded-For`, if any.
    ///   - trustedProxies: normalised addresses of proxies whose `X-Forwarded-For` is believed.
    /// - Returns: the nearest address in `X-Forwarded-For` that is not a trusted proxy, walking
    ///   from the right (each proxy appends the address it was reached from, so only the entries
    ///   trusted proxies wrote are believed; a client can write anything to the left of them),
    ///   when the socket's peer is a trusted proxy; otherwise the socket's peer.
    public static func client(socketPeer: String, forwardedFor: String?, trustedProxies: Set<String>) -> String {
        let peer = normalized(socketPeer) ?? socketPeer
        guard let forwardedFor, trustedProxies.contains(peer) else { return peer }
        for entry in forwardedFor.split(separator: ",").reversed() {
            guard let address = normalized(String(entry)) else { return peer }
            if !trustedProxies.contains(address) { return address }
        }
        return peer
    }

    /// Whether no octet of a dotted quad (one inet_pton took) starts with a zero it does not need.
    private static func isCanonicalDottedQuad(_ text: String) -> Bool {
        var atOctetStart = true
        var zeroStarted = false
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") {
                atOctetStart = true
                zeroStarted = false
                continue
            }
            if zeroStarted { return false }
            zeroStarted = atOctetStart && byte == UInt8(ascii: "0")
            atOctetStart = false
        }
        return true
    }

    private static func format(_ family: Int32, _ address: UnsafeRawPointer) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(family, address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension String {
    /// Without spaces and tabs at either end; itself (no copy) when there are none, as for
    /// every address the socket gives.
    fileprivate var trimmingSpaces: String {
        let blank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = utf8.first, let last = utf8.last, blank(first) || blank(last) else { return self }
        let bytes = Array(utf8)
        guard let start = bytes.firstIndex(where: { !blank($0) }), let end = bytes.lastIndex(where: { !blank($0) }) else {
            return ""
        }
        return String(decoding: bytes[start...end], as: UTF8.self)
    }
}
