// The caps on connections still sending their headers (`UnfinishedHeaders`), on the service
// thread: the accept filter's check, a kept-alive connection counted again, and the figures
// `/metrics` reads.
internal import CLibWebSockets
import Logging

extension WebSocketServer {
    /// Connections accepted that have not sent their whole request line and headers yet.
    public var connectionsInHeaders: Int { unfinishedHeaders.count }

    /// Connections closed as they were accepted because `maxConnectionsInHeaders` (`total`) or
    /// `maxConnectionsInHeadersPerAddress` (`perAddress`) connections were sending headers.
    public var connectionsRefusedInHeaders: (total: Int, perAddress: Int) {
        (unfinishedHeaders.refusedTotal, unfinishedHeaders.refusedPerAddress)
    }

    /// Whether the socket the accept filter sees is closed unread, past a cap (`key`: the
    /// address it counts under, nil for none).
    func closesForUnfinishedHeaders(_ descriptor: Int32, key: String?) -> Bool {
        guard let refusal = unfinishedHeaders.admit(descriptor, key: key) else { return false }
        // Debug only: a flood would otherwise write a line per connection; the metric counts them.
        configuration.logger.debug("closed a connection at accept: too many connections sending headers", metadata: [
            "cap": "\(refusal == .total ? "maxConnectionsInHeaders" : "maxConnectionsInHeadersPerAddress")",
            "peer": "\(key ?? "-")",
        ])
        return true
    }

    /// lws made a connection of the socket the filter just let through: it counts, and its
    /// descriptor is kept with the connection (lws's opaque user data, which nothing else of
    /// this server's sets) for `unfinishedHeadersDestroyed`.
    func adoptedForUnfinishedHeaders(_ wsi: OpaquePointer, _ descriptor: Int32) {
        if unfinishedHeaders.adopted(descriptor) {
            lws_set_opaque_user_data(wsi, UnsafeMutableRawPointer(bitPattern: Int(descriptor) + 1))
        }
    }

    /// lws frees a connection (`LWS_CALLBACK_WSI_DESTROY`, after it closed the descriptor). Most
    /// closes were told before, while the descriptor was open (`LWS_CALLBACK_CLOSED_HTTP`), but
    /// lws 4.1 tells none for a connection whose upgrade it refused (an `Upgrade` other than
    /// `websocket`, answered 403 by lws; one the upgrade's checks refused, answered by Panes):
    /// without this it would count until its descriptor was accepted again. The descriptor was this connection's
    /// until now, so whatever it counts is this connection's.
    func unfinishedHeadersDestroyed(_ wsi: OpaquePointer) {
        guard let noted = lws_get_opaque_user_data(wsi) else { return }
        unfinishedHeaders.finished(Int32(truncatingIfNeeded: Int(bitPattern: noted) - 1))
    }

    /// A kept-alive HTTP connection whose answer is out reads its next request: its headers
    /// count again, under the address noted at accept (none for a trusted proxy's). Only Panes'
    /// own answers end here: a request lws answers itself (a file, its `HEAD`, a 304, a 415)
    /// tells no callback when its answer is out, so such a connection never stops counting
    /// until Panes takes a request of it (`LWS_CALLBACK_HTTP`), upgrades it, or it closes. A slot
    /// emptied meanwhile (an upgrade refused on a kept-alive connection) sends this to the
    /// socket, as `client(of:)` does: it is rare, so the getpeername costs a storm nothing.
    func readingHeadersAgain(_ wsi: OpaquePointer) {
        let descriptor = lws_get_socket_fd(wsi)
        let peer = acceptedPeers[descriptor] ?? PeerAddress.normalized(peerAddress(wsi))
        let key = peer.flatMap { configuration.trustedProxies.contains($0) ? nil : $0 }
        unfinishedHeaders.readingAgain(descriptor, key: key)
        lws_set_opaque_user_data(wsi, UnsafeMutableRawPointer(bitPattern: Int(descriptor) + 1))
    }
}
