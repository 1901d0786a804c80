/// Which client operations a document applied, remembered past its kept log: per op-id
/// *stream* (an op id `stream:n`, the part before its last colon), the highest `n` applied.
///
/// Why: a window that re-opens from beyond the kept log asks which of its unacknowledged
/// operations the server applied (`openDocument`'s `pending`), so one whose reply was lost is
/// not applied a second time by the rebase over the difference. The log answers for what it
/// keeps; this answers for what compaction dropped. A client sends a stream's operations one
/// at a time, in order (the JavaScript client's op ids are `<session>.<page load><open>:<n>`),
/// so "`n` applied" follows from "some `m >= n` of the stream applied". An op id without a
/// numeric tail is its own stream, with `n = 0`.
///
/// Bounded: entries older than `operationIdRetentionMs` go, and of more than
/// `operationIdRetentionStreams`, the oldest. Kept with the document's snapshot in the store.
public struct AppliedStreams: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var counter: Int64
        public var revision: Int64
        public var at: Millis

        public init(counter: Int64, revision: Int64, at: Millis) {
            self.counter = counter
            self.revision = revision
            self.at = at
        }
    }

    /// By stream, compared by its bytes: op ids come from clients, and two streams that are
    /// the same text in different bytes are two streams (CONCEPTS.md, invariant 10).
    public private(set) var entries: [Identifier: Entry]

    public init(_ entries: [Identifier: Entry] = [:]) {
        self.entries = entries
    }

    /// An op id's stream and counter.
    static func split(_ opId: String) -> (stream: String, counter: Int64) {
        guard let colon = opId.utf8.lastIndex(of: UInt8(ascii: ":")) else { return (opId, 0) }
        let tail = opId.utf8[opId.utf8.index(after: colon)...]
        guard !tail.isEmpty, tail.count <= 18, tail.allSatisfy({ $0 >= 48 && $0 <= 57 }),
              let counter = Int64(String(decoding: tail, as: UTF8.self)) else { return (opId, 0) }
        return (String(decoding: opId.utf8[..<colon], as: UTF8.self), counter)
    }

    /// Remembers an operation the log is about to drop.
    mutating func fold(_ entry: StoredOperation) {
        let (stream, counter) = Self.split(entry.opId)
        if let known = entries[stream], known.counter >= counter { return }
        entries[stream] = Entry(counter: counter, revision: entry.revision, at: entry.createdAt)
    }

    /// Whether an operation with this id was applied and then dropped from the log.
    func applied(_ opId: String) -> Bool {
        let (stream, counter) = Self.split(opId)
        guard let known = entries[stream] else { return false }
        return known.counter >= counter
    }

    /// Forgets entries older than `cutoff`, then the oldest past `limit`.
    mutating func prune(olderThan cutoff: Millis, limit: Int) {
        entries = entries.filter { $0.value.at >= cutoff }
        guard entries.count > limit else { return }
        let kept = entries.sorted { $0.value.revision > $1.value.revision }.prefix(limit)
        entries = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
    }

    /// The stored form: `[[stream, counter, revision, at], …]`. An array, not an object keyed
    /// by stream: two streams that are the same text in other bytes are two entries, and a
    /// JSON object with two such keys is refused when read (`JSONCodec.decode`).
    ///
    /// Sorted by the stream's bytes (`Identifier`'s `<`), not in the dictionary's order, which
    /// differs from one dictionary to the next: the same state is stored as the same text,
    /// whatever order its streams were folded in and whichever process wrote it.
    public var json: JSONValue {
        .array(entries.sorted { $0.key < $1.key }.map { stream, entry in
            .array([.string(stream.rawValue), .int(entry.counter), .int(entry.revision), .int(entry.at)])
        })
    }

    /// Reads the stored form, or the object form `{"stream": [counter, revision, at], …}`
    /// written before (databases hold it until the document's next snapshot).
    ///
    /// - Throws: `PanesError` naming the first entry it cannot read. Nothing is skipped: an
    ///   entry forgotten would let a resent operation of its stream be applied a second time.
    public init(json: JSONValue) throws(PanesError) {
        var entries: [Identifier: Entry] = [:]
        switch json {
        case .array(let rows):
            for row in rows {
                guard case .array(let fields) = row, fields.count == 4, case .string(let stream) = fields[0] else {
                    throw PanesError(.invalidField, "an applied op-id entry is not [stream, counter, revision, at]")
                }
                entries[Identifier(stream)] = try Self.entry(Array(fields.dropFirst()), stream: stream)
            }
        case .object(let object):
            for (stream, value) in object {
                guard case .array(let fields) = value else {
                    throw PanesError(.invalidField, "the applied op-id stream `\(stream.prefix(64))` is not [counter, revision, at]")
                }
                entries[Identifier(stream)] = try Self.entry(fields, stream: stream)
            }
        default:
            throw PanesError(.invalidField, "the applied op ids are \(json.typeName), not an array")
        }
        self.entries = entries
    }

    private static func entry(_ fields: [JSONValue], stream: String) throws(PanesError) -> Entry {
        guard fields.count == 3, case .int(let counter) = fields[0], case .int(let revision) = fields[1],
              case .int(let at) = fields[2] else {
            throw PanesError(.invalidField, "the applied op-id stream `\(stream.prefix(64))` is not [counter, revision, at]")
        }
        return Entry(counter: counter, revision: revision, at: at)
    }
}
