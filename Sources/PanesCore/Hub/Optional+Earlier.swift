extension Optional where Wrapped: Comparable {
    /// The earlier of two deadlines, either of which may be absent; nil when both are.
    /// `Hub.nextDeadline` is read after every event: chained, this reads its dozen deadlines
    /// without building the array a literal and `compactMap { $0 }.min()` would (issue 27).
    @inlinable public func earlier(_ other: Wrapped?) -> Wrapped? {
        guard let self else { return other }
        guard let other else { return self }
        return Swift.min(self, other)
    }
}
