/// What differs between the features whose writes go through ordered channels (`Commit`):
/// where their writers are, what is held of a channel, how it is read back, how a batch is
/// made and how its writes are failed. The rest (batching, committing, catching up, following
/// other nodes, failing a stuck channel) is written once, in the generic writer below.
protocol WrittenChannel {
    associatedtype Key: Hashable & Sendable
    associatedtype Item: Sendable
    /// The feature's writers in `CommitState`.
    static var writers: WritableKeyPath<CommitState, ChannelWriters<Key, Item>> { get }
    /// The version of the channel held here; nil when it is not held.
    static func held(_ key: Key, in hub: Hub) -> Int64?
    /// What a catch-up reads: on a node of a cluster what other nodes committed past the
    /// version held, alone (after a conflict) the whole channel.
    static func catchUpRead(_ key: Key, afterConflict: Bool, in hub: inout Hub) -> LoadRequest
    /// Checks the channel's waiting writes and commits them as one (`Hub.takeBatch`,
    /// `Hub.commitBatch`), or answers them if they change nothing.
    static func startBatch(_ key: Key, in hub: inout Hub)
    /// Answers writes that will not be written with `error`.
    static func fail(_ items: [Item], _ error: PanesError, on key: Key, in hub: inout Hub)
    /// What the writes of a channel whose commits conflict with nothing newer are told.
    static var stuckError: PanesError { get }
    /// A commit or catch-up of the channel is over and its writer settled.
    static func settled(_ key: Key, in hub: inout Hub)
}

extension WrittenChannel {
    static func settled(_ key: Key, in hub: inout Hub) {}
}

/// The generic channel writer: at most one commit per channel in flight, the writes that come
/// meanwhile going together as the next (group commit); a conflict reads what the store has
/// (`catchUp`) and checks the writes again on top of it; on a node of a cluster, a notice of
/// another node's commit is followed the same way (`follow`).
extension Hub {
    /// Queues a write on its channel and starts a batch if the channel is free.
    mutating func enqueue<C: WrittenChannel>(_: C.Type, _ item: C.Item, on key: C.Key) {
        commits[keyPath: C.writers].enqueue(item, on: key)
        C.startBatch(key, in: &self)
    }

    /// The channel's next batch, taken out of its writer (`commitBatch` gives the writer
    /// back): nil when it is busy or has nothing waiting, or when it catches up first (a
    /// notice came while it was busy).
    mutating func takeBatch<C: WrittenChannel>(_: C.Type, _ key: C.Key) -> (writer: ChannelQueue<C.Item>, items: [C.Item])? {
        if !commits[keyPath: C.writers].isBusy(key), catchUpIfBehind(C.self, key) { return nil }
        return commits[keyPath: C.writers].nextBatch(key)
    }

    /// Commits a batch taken by `takeBatch` on `channel` at `base`; `pending` says what to do
    /// with its outcome (`Hub+Commits.swift`).
    mutating func commitBatch<C: WrittenChannel>(_: C.Type, _ key: C.Key, writer: ChannelQueue<C.Item>, channel: Channel,
                                                 base: Int64, commands: [StoreCommand], pending: PendingCommit) {
        let id = commits.makeID()
        var writer = writer
        writer.inFlight = id
        commits[keyPath: C.writers][key] = writer
        commits.pending[id] = pending
        submit(Commit(id: id, channel: channel, base: base, commands: commands))
    }

    /// A batch with nothing to commit: its writer goes (its writes are answered by the caller).
    mutating func dropBatch<C: WrittenChannel>(_: C.Type, _ key: C.Key) {
        commits[keyPath: C.writers][key] = nil
    }

    /// A batch's commit conflicted: its writes go back first in line, and the channel reads
    /// what the store has before they are checked again.
    mutating func retryAfterConflict<C: WrittenChannel>(_: C.Type, _ items: [C.Item], on key: C.Key) {
        commits[keyPath: C.writers].requeue(items, on: key)
        catchUp(C.self, key, afterConflict: true)
    }

    /// A commit or catch-up is over: an idle writer goes, and the next batch starts.
    mutating func nextBatch<C: WrittenChannel>(_: C.Type, _ key: C.Key) {
        commits[keyPath: C.writers].settle(key)
        C.settled(key, in: &self)
        C.startBatch(key, in: &self)
    }

    /// Another node committed on the channel up to `version` (its notice): read what it wrote,
    /// unless this node's own commit on it is in flight (then after that commit).
    mutating func follow<C: WrittenChannel>(_: C.Type, _ key: C.Key, to version: Int64) {
        guard commits[keyPath: C.writers].follow(key, to: version, held: C.held(key, in: self)) else { return }
        catchUp(C.self, key, afterConflict: false)
    }

    /// Starts reading what the store has of the channel; its writes wait meanwhile.
    mutating func catchUp<C: WrittenChannel>(_: C.Type, _ key: C.Key, afterConflict: Bool) {
        let read = C.catchUpRead(key, afterConflict: afterConflict, in: &self)
        commits[keyPath: C.writers].startCatchUp(key, afterConflict: afterConflict)
        effects.append(.load(read))
    }

    /// Before the channel's next batch: catches up first if a notice came while it was busy.
    /// - Returns: whether a catch-up started (the batch waits for it).
    mutating func catchUpIfBehind<C: WrittenChannel>(_: C.Type, _ key: C.Key) -> Bool {
        guard commits[keyPath: C.writers].stillBehind(key, held: C.held(key, in: self)) else { return false }
        catchUp(C.self, key, afterConflict: false)
        return true
    }

    /// A catch-up's read is in (and will be applied by the caller).
    /// - Returns: whether it followed a conflict of this node's commit.
    mutating func endCatchUp<C: WrittenChannel>(_: C.Type, _ key: C.Key) -> Bool {
        commits[keyPath: C.writers].endCatchUp(key)
    }

    /// A catch-up applied: after a conflict that found nothing newer (`moved` false) the store
    /// and the hub disagree and a retry would only conflict again, so the waiting writes fail;
    /// otherwise the next batch goes.
    mutating func caughtUp<C: WrittenChannel>(_: C.Type, _ key: C.Key, afterConflict: Bool, moved: Bool) {
        if afterConflict && !moved {
            failStuck(C.self, key)
            return
        }
        nextBatch(C.self, key)
    }

    /// Fails the writes waiting on a channel whose commits conflict with nothing newer.
    mutating func failStuck<C: WrittenChannel>(_: C.Type, _ key: C.Key) {
        failWaiting(C.self, key, C.stuckError)
    }

    /// Fails every write waiting on the channel with `error`; its writer goes.
    mutating func failWaiting<C: WrittenChannel>(_: C.Type, _ key: C.Key, _ error: PanesError) {
        let items = commits[keyPath: C.writers].takeWaiting(key)
        C.fail(items, error, on: key, in: &self)
    }
}
