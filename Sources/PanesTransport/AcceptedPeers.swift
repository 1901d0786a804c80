// Threading: the service thread only, like the server that holds it.

/// Who each accepted connection counts as (`PeerAddress.normalized`), by its socket
/// descriptor: read once, from the address `accept` returned, when lws offers the new socket
/// for filtering (`LWS_CALLBACK_FILTER_NETWORK_CONNECTION`). The upgrade's checks and the new
/// WebSocket connection then neither ask the kernel again (`getpeername`) nor format and
/// normalise the address again (three times a connection before; every window of a
/// reconnect storm comes through here).
///
/// Descriptors are small numbers the kernel hands out again once closed. Every socket the
/// listener accepts passes the filter, which writes its slot (empties it when it has no
/// address to note, or when the filter closes the socket), so no connection reads the slot of
/// one that held its descriptor before. The slot is emptied again when its connection closes
/// and lws says so while the descriptor is still open (`LWS_CALLBACK_CLOSED` for a WebSocket,
/// `LWS_CALLBACK_CLOSED_HTTP` for an HTTP connection), and when an upgrade is refused (lws
/// reports no close for those); a connection lws drops itself before the upgrade's checks
/// leaves its slot until the next accept of that descriptor overwrites it. A slot with nothing
/// sends the reader back to asking the socket.
struct AcceptedPeers {
    private var keys: [String?] = []

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
