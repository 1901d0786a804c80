/// The writers of one feature's ordered channels (preference domains, document logs): per
/// channel the commit in flight and what waits for it (`ChannelQueue`), and how far other
/// nodes were heard to have moved it meanwhile. Owned by `CommitState`; driven by the generic
/// writer (`Hub+ChannelWriting.swift`), the same for every feature.
struct ChannelWriters<Key: Hashable & Sendable, Item: Sendable>: Sendable {
    private var queues: [Key: ChannelQueue<Item>] = [:]
    /// Versions a notice said the channel reached (another node's commit) while this node's own
    /// commit on it was in flight: it catches up once that commit's outcome is in. Only a node
    /// of a cluster is ever behind.
    private var behind: [Key: Int64] = [:]

    subscript(key: Key) -> ChannelQueue<Item>? {
        get { queues[key] }
        set { queues[key] = newValue }
    }

    /// No channel of the feature has a writer: nothing in flight, waiting or catching up.
    var isEmpty: Bool { queues.isEmpty }

    func isBusy(_ key: Key) -> Bool { queues[key]?.busy == true }

    /// Whether a catch-up of the channel is owed (`follow` found it busy).
    func isBehind(_ key: Key) -> Bool { behind[key] != nil }

    /// Every write waiting for a channel's next commit, of every channel.
    var waiting: [Item] { queues.values.flatMap(\.waiting) }

    /// Queues a write; `takeBatch` takes it with the others waiting.
    mutating func enqueue(_ item: Item, on key: Key) {
        queues[key, default: ChannelQueue()].waiting.append(item)
    }

    /// Puts writes back at the front of the line (their commit conflicted): they go again,
    /// first, once the channel has caught up.
    mutating func requeue(_ items: [Item], on key: Key) {
        queues[key, default: ChannelQueue()].waiting.insert(contentsOf: items, at: 0)
    }

    /// The channel's next batch: its waiting writes and its writer (to be given back with the
    /// commit in flight, or dropped), when it has no commit in flight, is not catching up, and
    /// has something waiting.
    func nextBatch(_ key: Key) -> (writer: ChannelQueue<Item>, items: [Item])? {
        guard var writer = queues[key], !writer.busy, !writer.waiting.isEmpty else { return nil }
        let items = writer.waiting
        writer.waiting = []
        return (writer, items)
    }

    /// Another node moved the channel to `version`, of which `held` is held here (nil: the
    /// channel is not held, so there is nothing to follow).
    /// - Returns: whether to catch up now; when busy it catches up after its commit instead.
    mutating func follow(_ key: Key, to version: Int64, held: Int64?) -> Bool {
        guard let held, version > held else { return false }
        guard isBusy(key) else { return true }
        markBehind(key, at: version)
        return false
    }

    /// Owes the channel a catch-up to at least `version`, read once it is not busy.
    mutating func markBehind(_ key: Key, at version: Int64) {
        behind[key] = max(behind[key] ?? 0, version)
    }

    /// Whether a catch-up owed (`follow`) is still needed, `held` being what is held now; one
    /// no longer needed is forgotten.
    mutating func stillBehind(_ key: Key, held: Int64?) -> Bool {
        guard let version = behind[key] else { return false }
        guard let held, version > held else {
            behind[key] = nil
            return false
        }
        return true
    }

    /// A catch-up starts: the channel takes no commit until `endCatchUp`.
    mutating func startCatchUp(_ key: Key, afterConflict: Bool) {
        behind[key] = nil
        queues[key, default: ChannelQueue()].catchingUp = true
        queues[key]?.afterConflict = afterConflict
    }

    /// A catch-up goes on with another read (the first could not be applied); nothing else changes.
    mutating func continueCatchUp(_ key: Key) {
        queues[key, default: ChannelQueue()].catchingUp = true
    }

    /// A catch-up's read is in.
    /// - Returns: whether it followed a conflict of this node's commit.
    mutating func endCatchUp(_ key: Key) -> Bool {
        let afterConflict = queues[key]?.afterConflict ?? false
        queues[key]?.catchingUp = false
        queues[key]?.afterConflict = false
        return afterConflict
    }

    /// A commit's outcome is in: the channel may take the next.
    mutating func commitEnded(_ key: Key) {
        queues[key]?.inFlight = nil
    }

    /// Drops the channel's writer once nothing is in flight or waiting.
    mutating func settle(_ key: Key) {
        if queues[key]?.isIdle == true { queues[key] = nil }
    }

    /// Takes the writes waiting on the channel, and its writer with them: they will not be
    /// written (the caller answers them).
    mutating func takeWaiting(_ key: Key) -> [Item] {
        queues.removeValue(forKey: key)?.waiting ?? []
    }
}

/// One channel's writer: the commit in flight, if any, and what waits for it.
struct ChannelQueue<Item: Sendable>: Sendable {
    var inFlight: CommitID?
    /// Reading what another node committed after a conflict.
    var catchingUp = false
    /// The catch-up follows a conflict of this node's commit: finding nothing newer then means
    /// the store and the hub disagree, and retrying would only conflict again.
    var afterConflict = false
    /// The channel was caught up for the writes waiting now (a compare-and-set they failed
    /// against this node's copy is then true of the store's).
    var rechecked = false
    var waiting: [Item] = []

    var busy: Bool { inFlight != nil || catchingUp }
    var isIdle: Bool { !busy && waiting.isEmpty }
}
