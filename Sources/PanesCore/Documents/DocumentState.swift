/// The workspace documents the hub knows: summaries of all, open documents in full.
struct DocumentState: Sendable {}
