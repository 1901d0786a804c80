// Threading: pure functions over text and a socket of their own; any thread.
#if canImport(Glibc)
import Glibc
#endif

/// The address the server listens on (`TransportConfiguration.host`, `--host`).
public enum ListenAddress {
    /// Why `host:port` cannot be bound, as the kernel says it ("Address already in use",
    /// "Cannot assign requested address"): asked again with a socket of its own after lws could
    /// not bind, since lws keeps its reason to its log. Nil when the address is not an IPv4 one
    /// or the bind now succeeds (the port was freed meanwhile).
    static func bindFailure(host: String, port: Int) -> String? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
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
