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
