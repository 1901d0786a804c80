// Threading: the service thread only, like the server that holds it.

/// Who each accepted connection counts as (`PeerAddress.normalized`), by its socket
/// descriptor: read once, from the address `accept` returned, when lws offers the new socket
/// for filtering (`LWS_CALLBACK_FILTER_NETWORK_CONNECTION`). The upgrade's checks and the new
/// WebSocket connection then neither ask the kernel again (`getpeername`) nor format and
/// normalise the address again (three times a connection before; every window of a
/// reconnect storm comes through here).
///
/// Descriptors are small numbers the kernel hands out again once closed. Every socket the
/// listener accepts passes the filter, which notes its key (`accepting`); the slot is written
/// when lws has made a connection of the socket (`adopted`, at
/// `LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED`), and then holds the key the filter noted or
/// nothing, so no connection reads the slot of one that held its descriptor before. A socket
/// lws closes without adopting it (the filter closed it, or lws could not take it: a descriptor
/// over its limit, no memory) gets no callback after the filter, so it never had a slot. The
/// slot is emptied again when its connection closes and lws says so while the descriptor is
/// still open: `LWS_CALLBACK_CLOSED` for a WebSocket and `LWS_CALLBACK_CLOSED_HTTP` for an
/// HTTP connection, which lws 4.1 also sends for connections it drops itself before any of the
/// server's checks (it counts a connection reading its headers as established; seen for a peer
/// gone before or during its request, headers over `maxHTTPHeaderBytes`, a handshake without a
/// key: AcceptedPeersTests); and when an upgrade is refused (lws reports no close for those).
/// A slot with nothing sends the reader back to asking the socket.
struct AcceptedPeers {
    private var keys: [String?] = []
    /// The socket the accept filter saw last and its key, until lws adopts it.
    private var pending: (descriptor: Int32, key: String?) = (-1, nil)

    /// The accept filter saw `descriptor`, from `key` (nil: no address to note).
    mutating func accepting(_ descriptor: Int32, key: String?) {
        pending = (descriptor, key)
    }

    /// lws made a connection of the socket `descriptor`: its slot holds the key the filter
    /// noted for it, or nothing.
    mutating func adopted(_ descriptor: Int32) {
        self[descriptor] = pending.descriptor == descriptor ? pending.key : nil
        pending = (-1, nil)
    }

    subscript(descriptor: Int32) -> String? {
        get { descriptor >= 0 && Int(descriptor) < keys.count ? keys[Int(descriptor)] : nil }
        set {
            guard descriptor >= 0 else { return }
            let index = Int(descriptor)
            if index >= keys.count {
                guard newValue != nil else { return }
                keys.append(contentsOf: repeatElement(nil, count: index - keys.count + 1))
            }
            keys[index] = newValue
        }
    }
}
