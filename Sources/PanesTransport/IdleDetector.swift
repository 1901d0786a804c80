/// Finds dead peers exactly, at O(1) per received frame and without ever scanning all
/// connections: a connection silent for `pingAfter` is pinged; one still silent at twice that
/// is reported as unresponsive. A peer that crashed or lost its network never sends a FIN,
/// so without this its scene would look live for ever. It also bounds closes: a connection
/// told to close that has not finished within `pingAfter` (its peer reads nothing, so not even
/// the close frame gets out) is reported for dropping.
///
/// Connections sit in three lists: `quiet` (not pinged) and `pinged`, ordered by when they
/// were last heard from, and `closing`, ordered by when their close was asked. Hearing from a
/// connection moves it to the back of `quiet`; pinging moves the head of `quiet` to the back
/// of `pinged`, which keeps both in order. The earliest deadline is therefore one of the three
/// heads, and the server keeps a single timer for it (lws's timer list is sorted by an
/// insertion walk, so a timer per connection would cost O(n) per frame again).
final class IdleDetector {
    let pingAfter: UInt64
    private let quiet = ConnectionList(tag: 1)
    private let pinged = ConnectionList(tag: 2)
    private let closing = ConnectionList(tag: 3)

    init(pingAfterMilliseconds: Int) {
        pingAfter = UInt64(max(pingAfterMilliseconds, 1))
    }

    var count: Int { quiet.count + pinged.count + closing.count }

    /// A new connection, or one that just sent something: its deadlines start again from now.
    func heard(_ connection: ServerConnection, at now: UInt64) {
        let tag = connection.listTag
        // A closing connection's `lastHeard` holds when its close was asked.
        guard tag != closing.tag else { return }
        connection.lastHeard = now
        if tag == quiet.tag {
            quiet.moveToBack(connection)  // nearly every frame
            return
        }
        list(of: connection)?.remove(connection)
        quiet.append(connection)
    }

    /// The server asked the connection to close; it has `pingAfter` to finish.
    func closeRequested(_ connection: ServerConnection, at now: UInt64) {
        guard connection.listTag != closing.tag else { return }
        list(of: connection)?.remove(connection)
        connection.closeRequestedAt = now
        closing.append(connection)
    }

    func forget(_ connection: ServerConnection) {
        list(of: connection)?.remove(connection)
    }

    /// The list the connection is in (its `listTag`), if any.
    private func list(of connection: ServerConnection) -> ConnectionList? {
        switch connection.listTag {
        case quiet.tag: quiet
        case pinged.tag: pinged
        case closing.tag: closing
        default: nil
        }
    }

    /// The monotonic millisecond at which `expire` next has work, or nil with no connections.
    var nextDeadline: UInt64? {
        [quiet.head.map { $0.lastHeard + pingAfter },
         pinged.head.map { $0.lastHeard + 2 * pingAfter },
         closing.head.map { $0.closeRequestedAt + pingAfter }].compactMap { $0 }.min()
    }

    struct Expired {
        /// Silent for `pingAfter`: ping them (they are now in `pinged`).
        var ping: [ServerConnection] = []
        /// Silent for twice `pingAfter`: close them as unresponsive (they are in no list now).
        var unresponsive: [ServerConnection] = []
        /// Asked to close `pingAfter` ago and still open: drop them (they are in no list now).
        var stuck: [ServerConnection] = []
    }

    /// Everything due at `now`. Costs O(1) per connection returned.
    func expire(at now: UInt64) -> Expired {
        var expired = Expired()
        while let head = closing.head, head.closeRequestedAt + pingAfter <= now {
            closing.remove(head)
            expired.stuck.append(head)
        }
        while let head = pinged.head, head.lastHeard + 2 * pingAfter <= now {
            pinged.remove(head)
            expired.unresponsive.append(head)
        }
        while let head = quiet.head, head.lastHeard + pingAfter <= now {
            quiet.remove(head)
            if head.lastHeard + 2 * pingAfter <= now {
                expired.unresponsive.append(head)
            } else {
                pinged.append(head)
                expired.ping.append(head)
            }
        }
        return expired
    }
}
