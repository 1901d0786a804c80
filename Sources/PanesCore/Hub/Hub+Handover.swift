/// What the runtime takes from the hub after an event besides its effects, and gives back.
extension Hub {
    /// The `id` and type of the request the last `received` (or `request`) event carried (its type as its
    /// position in `requestTypes`, nil when the frame's `type` names no request), once: nil
    /// when that frame had no usable `id`, or its connection was closing.
    public mutating func takeReceivedRequest() -> (id: RequestID, typeIndex: Int?)? {
        defer { receivedRequest = nil }
        return receivedRequest
    }

    /// Takes back an array `handle` returned, once its effects are carried out: the next
    /// event's effects are written into its storage instead of a new array's. Its effects are
    /// dropped. Kept only when nothing is being collected and it is the larger.
    public mutating func recycle(_ used: consuming [Effect]) {
        guard effects.isEmpty, effects.capacity < used.capacity else { return }
        // In place when the caller held the only reference. One by one: an event has a few, and
        // `removeAll(keepingCapacity:)` costs more than the allocation this saves.
        while !used.isEmpty { used.removeLast() }
        effects = used
    }
}
