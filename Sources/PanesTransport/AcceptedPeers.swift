// Threading: the service thread only, like the server that holds it.

/// Who each accepted connection counts as (`PeerAddress.normalized`), by its socket
/// descriptor: read once, from the address `accept` returned, when lws offers the new socket
/// for filtering (`LWS_CALLBACK_FILTER_NETWORK_CONNECTION`). The upgrade's checks and the new
/// WebSocket connection then neither ask the kernel again (`getpeername`) nor format and
/// normalise the address again (three times a connection before; every window of a
/// reconnect storm comes through here).
///
/// Descriptors are small numbers the kernel hands out again once closed; every socket the
/// listener accepts passes the filter, which writes its slot, so a slot always describes the
/// connection that holds the descriptor now. A slot with nothing (a socket that is not an IP
/// one) sends the reader back to asking the socket.
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
