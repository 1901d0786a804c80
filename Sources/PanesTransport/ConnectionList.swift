/// An intrusive doubly linked list of connections: O(1) append, remove and move-to-back,
/// with the links stored in the connections themselves (one list at a time per connection).
///
/// The idle detector keeps connections in order of when they were last heard from, so the
/// connection whose deadline comes first is always at the head.
final class ConnectionList {
    /// What a connection in this list holds in `listTag` (never 0, which is no list); each
    /// list a connection may move between has its own.
    let tag: UInt8
    private(set) var head: ServerConnection?
    private(set) var tail: ServerConnection?
    private(set) var count = 0

    init(tag: UInt8) {
        precondition(tag != 0, "0 is no list's tag")
        self.tag = tag
    }

    func append(_ connection: ServerConnection) {
        precondition(connection.listTag == 0, "a connection is in one list at a time")
        connection.listTag = tag
        connection.previous = tail
        connection.next = nil
        if let tail { tail.next = connection } else { head = connection }
        tail = connection
        count += 1
    }

    /// Moves a connection of this list to its back, in place: what hearing from a quiet
    /// connection does on every frame, without unlinking it from the list and counting it out
    /// and in again (issue 27).
    func moveToBack(_ connection: ServerConnection) {
        guard let next = connection.next else { return }  // the tail already
        let previous = connection.previous
        if let previous { previous.next = next } else { head = next }
        next.previous = previous
        connection.previous = tail
        connection.next = nil
        tail?.next = connection
        tail = connection
    }

    func remove(_ connection: ServerConnection) {
        guard connection.listTag == tag else { return }
        if let previous = connection.previous { previous.next = connection.next } else { head = connection.next }
        if let next = connection.next { next.previous = connection.previous } else { tail = connection.previous }
        connection.previous = nil
        connection.next = nil
        connection.listTag = 0
        count -= 1
    }
}
