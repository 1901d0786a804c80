/// A document's kept operations, oldest first, indexed from 0, and cheap to copy and then
/// change: the hub edits a copy of an `OpenDocument` (taken out of a dictionary, or made for
/// a batch not yet committed), and an array would copy every kept operation on the copy's
/// first append (`operationLogRetention` of them, a thousand by default).
///
/// Full runs of `chunkSize` entries are frozen in shared chunks; only the newest, partial run
/// is an array of its own. Appending to a copy copies at most that run, and dropping from the
/// front (compaction) copies the list of chunk references.
struct OperationLog: RandomAccessCollection, Sendable {
    /// `chunkSize` operations, never changed after it is made, so copies share it.
    private final class Chunk: Sendable {
        let entries: [StoredOperation]

        init(_ entries: [StoredOperation]) {
            self.entries = entries
        }
    }

    static let chunkSize = 32

    private var chunks: [Chunk] = []
    /// The newest entries, fewer than `chunkSize`.
    private var tail: [StoredOperation] = []
    /// Entries at the front of `chunks[0]` that were dropped.
    private var skipped = 0

    init() {}

    init(_ entries: some Sequence<StoredOperation>) {
        for entry in entries { append(entry) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { chunks.count * Self.chunkSize - skipped + tail.count }

    subscript(position: Int) -> StoredOperation {
        precondition(position >= 0 && position < endIndex, "log index \(position) out of 0..<\(endIndex)")
        let offset = position + skipped
        let chunk = offset / Self.chunkSize
        return chunk < chunks.count ? chunks[chunk].entries[offset % Self.chunkSize]
            : tail[offset - chunks.count * Self.chunkSize]
    }

    mutating func append(_ entry: StoredOperation) {
        tail.append(entry)
        guard tail.count == Self.chunkSize else { return }
        chunks.append(Chunk(tail))
        tail = []
    }

    /// Drops the `count` oldest entries.
    mutating func removeFirst(_ count: Int) {
        precondition(count >= 0 && count <= self.count, "cannot drop \(count) of \(self.count) log entries")
        let offset = skipped + count
        let whole = Swift.min(offset / Self.chunkSize, chunks.count)
        chunks.removeFirst(whole)
        skipped = offset - whole * Self.chunkSize
        if chunks.isEmpty && skipped > 0 {
            tail.removeFirst(skipped)
            skipped = 0
        }
    }
}
