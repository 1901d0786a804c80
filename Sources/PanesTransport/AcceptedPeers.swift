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
/// A slot with nothing sends the reader back to asking the socket. A WebSocket's slot is also
/// emptied once it is open (`LWS_CALLBACK_ESTABLISHED`, which hands the key to the delegate):
/// nothing reads it after the upgrade.
///
/// The slots are kept in chunks of `chunkSize` descriptors, each made when a slot of it is
/// written and freed when its last is emptied. Open WebSockets hold no slot, so 10,000 idle
/// scenes hold no chunk (one array of a slot per descriptor was 16 bytes each, ~26 an idle
/// scene once grown, issue 27); a chunk costs an accept at most one allocation, no hashing.
struct AcceptedPeers {
    /// Descriptors a chunk covers.
    static var chunkSize: Int { 64 }

    private struct Chunk {
        /// Empty while the chunk holds no key, else `chunkSize` slots.
        var keys: [String?] = []
        var held = 0
    }

    private var chunks: [Chunk] = []
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

    /// Chunks made, for tests: none while no slot holds a key.
    var chunksHeld: Int { chunks.lazy.filter { !$0.keys.isEmpty }.count }

    subscript(descriptor: Int32) -> String? {
        get {
            guard descriptor >= 0 else { return nil }
            let (chunk, slot) = Int(descriptor).quotientAndRemainder(dividingBy: Self.chunkSize)
            guard chunk < chunks.count, !chunks[chunk].keys.isEmpty else { return nil }
            return chunks[chunk].keys[slot]
        }
        set {
            guard descriptor >= 0 else { return }
            let (chunk, slot) = Int(descriptor).quotientAndRemainder(dividingBy: Self.chunkSize)
            guard let newValue else {
                guard chunk < chunks.count, !chunks[chunk].keys.isEmpty, chunks[chunk].keys[slot] != nil else { return }
                chunks[chunk].keys[slot] = nil
                chunks[chunk].held -= 1
                if chunks[chunk].held == 0 { chunks[chunk].keys = [] }
                return
            }
            if chunk >= chunks.count { chunks.append(contentsOf: repeatElement(Chunk(), count: chunk - chunks.count + 1)) }
            if chunks[chunk].keys.isEmpty { chunks[chunk].keys = [String?](repeating: nil, count: Self.chunkSize) }
            if chunks[chunk].keys[slot] == nil { chunks[chunk].held += 1 }
            chunks[chunk].keys[slot] = newValue
        }
    }
}
