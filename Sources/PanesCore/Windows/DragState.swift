/// Drags in flight and recently ended.
struct DragState: Sendable {}
