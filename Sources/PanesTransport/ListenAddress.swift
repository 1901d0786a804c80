// Threading: pure functions over text and a socket of their own; any thread.
#if canImport(Glibc)
import Glibc
#endif

/// The address the server listens on (`TransportConfiguration.host`, `--host`). lws runs with
/// IPv6 off (`LWS_SERVER_OPTION_DISABLE_IPV6`): given an IPv6 address it listened on every IPv4
/// address instead, and given a name (`localhost`) on none, so only an IPv4 address is one.
public enum ListenAddress {
    /// Whether `text` is an IPv4 address as the OS reads one (`inet_pton(AF_INET)`): four decimal
    /// numbers 0–255 joined by dots, without leading zeros, spaces or anything else.
    public static func isIPv4(_ text: String) -> Bool {
        parsed(text) != nil
    }

    /// Whether listening on `text` listens on loopback only, reachable from this machine alone:
    /// an IPv4 address in 127.0.0.0/8 (Linux answers all of it on `lo`). Not `::1` or
    /// `localhost`, which are not listen addresses here (`isIPv4`).
    public static func isLoopback(_ text: String) -> Bool {
        guard var address = parsed(text) else { return false }
        return withUnsafeBytes(of: &address) { $0[0] } == 127
    }

    /// The address in network order, if `text` is an IPv4 address as the OS reads one.
    private static func parsed(_ text: String) -> in_addr? {
        var address = in_addr()
        // A NUL would end the text C reads (and lws binds) early.
        guard !text.utf8.contains(0), inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return address
    }

    /// Why `host:port` cannot be bound, as the kernel says it ("Address already in use",
    /// "Cannot assign requested address"): asked again with a socket of its own after lws could
    /// not bind, since lws keeps its reason to its log. Nil when the address is not an IPv4 one
    /// or the bind now succeeds (the port was freed meanwhile).
    static func bindFailure(host: String, port: Int) -> String? {
        guard let ipv4 = parsed(host) else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        address.sin_addr = ipv4
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // As lws binds: a port whose connections are in TIME_WAIT is not taken.
        var on: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return bound == 0 ? nil : String(cString: strerror(errno))
    }
}
