// Threading: the service thread only, like the server that holds it.

/// The connections still sending a request line and headers, and the two caps on them
/// (`maxConnectionsInHeaders` in all, `maxConnectionsInHeadersPerAddress` from one address):
/// a slow sender (slowloris: a byte of its headers every few seconds) holds a descriptor and an
/// lws header table until `httpHeaderTimeoutMs`, and Debian's lws 4.1 has no peer limits of its
/// own, so without a cap one address could hold every descriptor the process may open.
///
/// A connection is checked when lws offers its socket for filtering
/// (`LWS_CALLBACK_FILTER_NETWORK_CONNECTION`, before lws has made anything of it): past either
/// cap it is closed there, unread, and counted in `refused`. One let through counts from when
/// lws makes a connection of it (`adopted`, at `LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED`,
/// which follows the filter at once or never) until it is handed on (`finished`: an upgrade
/// passes its checks, `LWS_CALLBACK_HTTP_CONFIRM_UPGRADE`, or Panes takes a plain request,
/// `LWS_CALLBACK_HTTP`; a file lws serves itself keeps it counted) or it closes
/// (`LWS_CALLBACK_CLOSED_HTTP`, or, for the closes lws reports no other way,
/// `LWS_CALLBACK_WSI_DESTROY`). A refused upgrade still counts until lws closes it after its
/// answer, or reads the next request's headers on it. A kept-alive HTTP connection whose answer
/// from Panes is out reads its next request's headers, and counts again (`readingAgain`) until
/// Panes takes it.
///
/// The address is the key the accept filter notes (`PeerAddress.key`: IPv4 as a dotted quad,
/// IPv6 by its /64, as the limit on failed authentications counts it; one host holds a whole
/// /64, so by full address it could open 2^64 of them), written by `PeerAddress` from the
/// socket's bytes, so `String` equality here is byte equality. It is never a forwarded header's
/// (none is read yet, and a client writes them); a trusted proxy's address stands for many
/// clients and is not capped per address, only in the total.
///
/// Entries are kept by descriptor. Should a close ever go untold (none is known: a count missed
/// would hold a cap's place for good), its descriptor goes back to the kernel and so to a later
/// accept, whose adoption first ends what the descriptor counted before.
struct UnfinishedHeaders {
    enum Refusal: Equatable {
        /// `maxConnectionsInHeaders` connections were sending headers.
        case total
        /// `maxConnectionsInHeadersPerAddress` of them came from the new one's address.
        case perAddress
    }

    let maxTotal: Int
    let maxPerAddress: Int
    /// Connections counted now.
    private(set) var count = 0
    /// Connections closed at accept, by cap.
    private(set) var refusedTotal = 0
    private(set) var refusedPerAddress = 0
    /// The address each counted connection counts under ("" for none: no address, or a trusted
    /// proxy's, counted in the total only), by descriptor: no hashing.
    private var keys = DescriptorKeys()
    /// Counted connections by address, kept only from `tallyFrom` of them in all: with fewer no
    /// address can be at its cap, so an accept (every window of a reconnect storm) costs no
    /// hashing. Dropped again under half of that, not at once, so a count going up and down
    /// around it does not tally again each time.
    private var byAddress: [String: Int]?
    private let tallyFrom: Int
    /// The socket the filter let through last and its key, until lws adopts it.
    private var pending: (descriptor: Int32, key: String?) = (-1, nil)

    init(maxTotal: Int, maxPerAddress: Int) {
        self.maxTotal = maxTotal
        self.maxPerAddress = maxPerAddress
        tallyFrom = max(1, maxPerAddress / 2)
    }

    /// Connections from `key` counted now, for tests.
    func counted(from key: String) -> Int { byAddress.map { $0[key] ?? 0 } ?? keys.tally()[key] ?? 0 }

    /// Whether the counts by address are kept now, for tests.
    var tallying: Bool { byAddress != nil }

    /// The accept filter saw `descriptor` from `key` (nil: no address, or one not capped per
    /// address). Nil lets it through (it counts once adopted); otherwise the cap it is past,
    /// counted in `refused`, and the filter closes it.
    mutating func admit(_ descriptor: Int32, key: String?) -> Refusal? {
        pending = (-1, nil)
        if count >= maxTotal {
            refusedTotal += 1
            return .total
        }
        if let key, let held = byAddress?[key], held >= maxPerAddress {
            refusedPerAddress += 1
            return .perAddress
        }
        pending = (descriptor, key)
        return nil
    }

    /// lws made a connection of the socket `descriptor`: it counts (true) if the filter let it
    /// through last (lws adopts at once what the filter lets through, or closes it with no callback).
    @discardableResult
    mutating func adopted(_ descriptor: Int32) -> Bool {
        defer { pending = (-1, nil) }
        guard pending.descriptor == descriptor else { return false }
        begin(descriptor, key: pending.key)
        return true
    }

    /// A kept-alive HTTP connection reads its next request: it counts again, whatever the caps
    /// (it is open already; what it holds still counts against new ones).
    mutating func readingAgain(_ descriptor: Int32, key: String?) {
        begin(descriptor, key: key)
    }

    /// The connection's headers are whole, or it closed: it no longer counts. Does nothing for
    /// one not counted.
    mutating func finished(_ descriptor: Int32) {
        guard count > 0, let key = keys.remove(descriptor) else { return }
        end(key)
    }

    private mutating func begin(_ descriptor: Int32, key: String?) {
        if let previous = keys.remove(descriptor) { end(previous) }
        let stored = key ?? ""
        keys.insert(stored, at: descriptor)
        count += 1
        if byAddress != nil {
            if !stored.isEmpty { byAddress![stored, default: 0] += 1 }
        } else if count >= tallyFrom {
            byAddress = keys.tally()
        }
    }

    private mutating func end(_ key: String) {
        count -= 1
        guard byAddress != nil else { return }
        if count == 0 || count < tallyFrom / 2 {
            byAddress = nil
            return
        }
        guard !key.isEmpty, let index = byAddress!.index(forKey: key) else { return }
        let left = byAddress!.values[index] - 1
        if left > 0 { byAddress!.values[index] = left } else { byAddress!.remove(at: index) }
    }
}

/// A key per descriptor, in chunks of 64 descriptors, each made when a key of it is inserted and
/// freed when its last is removed (as `AcceptedPeers` keeps its slots).
private struct DescriptorKeys {
    private static let chunkSize = 64

    private struct Chunk {
        /// Empty while the chunk holds no key, else `chunkSize` slots.
        var keys: [String?] = []
        var held = 0
    }

    private var chunks: [Chunk] = []

    /// Sets the key of `descriptor`, which holds none.
    mutating func insert(_ key: String, at descriptor: Int32) {
        guard descriptor >= 0 else { return }
        let (chunk, slot) = Int(descriptor).quotientAndRemainder(dividingBy: Self.chunkSize)
        if chunk >= chunks.count { chunks.append(contentsOf: repeatElement(Chunk(), count: chunk - chunks.count + 1)) }
        if chunks[chunk].keys.isEmpty { chunks[chunk].keys = [String?](repeating: nil, count: Self.chunkSize) }
        chunks[chunk].keys[slot] = key
        chunks[chunk].held += 1
    }

    /// Removes and returns the key of `descriptor`, if it holds one.
    mutating func remove(_ descriptor: Int32) -> String? {
        guard descriptor >= 0 else { return nil }
        let (chunk, slot) = Int(descriptor).quotientAndRemainder(dividingBy: Self.chunkSize)
        guard chunk < chunks.count, !chunks[chunk].keys.isEmpty, let key = chunks[chunk].keys[slot] else { return nil }
        chunks[chunk].keys[slot] = nil
        chunks[chunk].held -= 1
        if chunks[chunk].held == 0 { chunks[chunk].keys = [] }
        return key
    }

    /// How many descriptors hold each key ("" left out).
    func tally() -> [String: Int] {
        var counts: [String: Int] = [:]
        for chunk in chunks where chunk.held > 0 {
            for case let key? in chunk.keys where !key.isEmpty { counts[key, default: 0] += 1 }
        }
        return counts
    }
}
