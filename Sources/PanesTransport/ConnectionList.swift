/// An intrusive doubly linked list of connections: O(1) append, remove and move-to-back,
/// with the links stored in the connections themselves (one list at a time per connection).
///
/// The idle detector keeps connections in order of when they were last heard from, so the
/// connection whose deadline comes first is always at the head.
final class ConnectionList {
    private(set) var head: ServerConnection?
    private(set) var tail: ServerConnection?
    private(set) var count = 0

    func append(_ connection: ServerConnection) {
        precondition(connection.list == nil, "a connection is in one list at a time")
        connection.list = self
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
        guard connection.list === self else { return }
        if let previous = connection.previous { previous.next = connection.next } else { head = connection.next }
        if let next = connection.next { next.previous = connection.previous } else { tail = connection.previous }
        connection.previous = nil
        connection.next = nil
        connection.list = nil
        count -= 1
    }
}
