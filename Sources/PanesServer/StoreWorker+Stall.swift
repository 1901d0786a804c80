// Threading: the store thread's (see StoreWorker.swift); `stalledCount` is written under the
// thread's lock.
import Foundation
import Logging
import PanesCore
import PanesThreads

extension StoreWorker {
    /// A transaction whose outcome the store could not tell, with what it wrote.
    struct Unresolved {
        let unknown: CommitOutcomeUnknown
        let writes: [StoreWrite]
        let sequence: UInt64?
        let since: MonotonicInstant
        /// Its commits were reported `.unknown` already.
        var reported = false

        /// Each commit's outcome (and each keyed persist's), in the order written, should the
        /// transaction have committed.
        var committedOutcomes: [(CommitID, CommitOutcome)] {
            StoreWorker.reported(writes).map { ($0, unknown.outcomes[$0] ?? .failed("no outcome reported")) }
        }

        var commitIDs: [CommitID] {
            writes.compactMap { if case .commit(let commit) = $0 { commit.id } else { nil } }
        }
    }

    /// A turn while writes are held: the batch waits or fails, the held transaction is asked
    /// about and the stalled persists retried when their time has come; at shutdown they are
    /// given up after `shutdownGiveUpMs`. False when the thread is done.
    func whileHeld(_ batch: [Work], stopRequested: MonotonicInstant?) -> Bool {
        absorb(batch[...])
        retryUnresolved()
        if unresolved == nil { retryStalled() }
        if isClear { return true }
        if case .stall(_, _, let giveUpMs) = policy, let stopRequested,
           MonotonicInstant.now().milliseconds(since: stopRequested) >= giveUpMs {
            logger.error("store unavailable at shutdown; giving up writes that were never acknowledged",
                         metadata: ["writes": "\(stalled.count + (unresolved?.writes.count ?? 0))",
                                    "error": "\(stallReason)"])
            return false
        }
        return true
    }

    /// Holds a transaction whose outcome is unknown: nothing of it is retried or reported until
    /// `retryUnresolved` finds out; what comes after waits or fails as in a stall.
    func hold(_ writes: [StoreWrite], sequence: UInt64?, unknown: CommitOutcomeUnknown) {
        if stalled.isEmpty { backoff.succeeded() }
        logger.error("a transaction's outcome is unknown; holding it and asking until the store can tell",
                     metadata: ["transaction": "\(unknown.transaction)", "error": "\(unknown.reason)"])
        stallReason = unknown.reason
        unresolved = Unresolved(unknown: unknown, writes: writes, sequence: sequence, since: .now())
        retryAt = .after(milliseconds: Int(backoff.failed()))
        thread.withLock { stalledCount = stalled.count + writes.count }
    }

    /// Asks the store whether the held transaction committed, if its time has come; past the
    /// bound, its commits are reported `.unknown` (once).
    private func retryUnresolved() {
        guard var held = unresolved, MonotonicInstant.now() >= retryAt else { return }
        let committed: Bool
        do {
            committed = try store.resolve(held.unknown)
        } catch {
            stallReason = "\(error)"
            retryAt = .after(milliseconds: Int(backoff.failed()))
            let deadline = held.since.adding(milliseconds: outcomeTimeoutMs)
            if !held.reported {
                if MonotonicInstant.now() >= deadline {
                    held.reported = true
                    logger.error("a transaction's outcome is still unknown; its commits are answered outcome_unknown",
                                 metadata: ["transaction": "\(held.unknown.transaction)", "error": "\(error)"])
                    onApplied(StoreReport(durable: nil, outcomes: held.commitIDs.map { ($0, .unknown("\(error)")) }))
                } else {
                    retryAt = min(retryAt, deadline)
                }
            }
            unresolved = held
            return
        }
        unresolved = nil
        retryAt = .distantPast
        if committed {
            logger.notice("the held transaction committed", metadata: ["transaction": "\(held.unknown.transaction)"])
            let committedAt = RuntimeMetrics.now
            thread.withLock {
                commits += 1
                committedWrites += held.writes.count
                stalledCount = stalled.count
            }
            // Its claims' held drops too: the hub reads them at those sessions' attach.
            onApplied(StoreReport(durable: held.sequence, outcomes: held.committedOutcomes,
                                  heldDropsFound: held.unknown.heldDropsFound, committedAt: committedAt))
        } else {
            // Not applied: its commits failed, its persists are retried ahead of those held after it.
            logger.notice("the held transaction did not commit; its writes are retried",
                          metadata: ["transaction": "\(held.unknown.transaction)"])
            let reason = "the transaction did not commit: \(held.unknown.reason)"
            let failed = held.commitIDs.map { ($0, CommitOutcome.failed(reason)) }
            let persists = held.writes.filter { if case .commit = $0 { false } else { true } }
            stalled.insert(contentsOf: persists, at: 0)
            if let sequence = held.sequence { stalledSequence = max(stalledSequence ?? 0, sequence) }
            thread.withLock { stalledCount = stalled.count }
            if !failed.isEmpty { onApplied(StoreReport(durable: nil, outcomes: failed)) }
        }
    }

    /// Keeps a failed run's persists for retry and answers its commits `.failed`.
    func stall(_ writes: [StoreWrite], sequence: UInt64?, reason: String) {
        if stalled.isEmpty {
            backoff.succeeded()
            logLimits.log(logger, .error, "store unavailable; holding writes and retrying", metadata: ["error": "\(reason)"],
                          now: Self.nowMs)
        }
        stallReason = reason
        retryAt = .after(milliseconds: Int(backoff.failed()))
        absorb(writes.map { Work.write($0, sequence: nil) }[...])
        if let sequence { stalledSequence = max(stalledSequence ?? 0, sequence) }
    }

    /// Work that arrives while persists are stalled: commits fail now (never applied ahead of
    /// the persists before them), persists join the stalled ones in order, loads fail without
    /// reading (they must see the stalled persists, which are not in the store).
    func absorb(_ works: ArraySlice<Work>) {
        var failed: [(CommitID, CommitOutcome)] = []
        for work in works {
            switch work {
            case .write(.commit(let commit), _):
                failed.append((commit.id, .failed(stallReason)))
            case .write where revoked != nil:
                // Never acknowledged, and never to be written: the node's lease has ended.
                continue
            case .write(let write, let sequence):
                stalled.append(write)
                if let sequence { stalledSequence = max(stalledSequence ?? 0, sequence) }
            case .load(let request):
                if !failed.isEmpty {
                    onApplied(StoreReport(durable: nil, outcomes: failed))
                    failed.removeAll()
                }
                onLoaded(Self.unavailable(request, stallReason))
            }
        }
        if !failed.isEmpty { onApplied(StoreReport(durable: nil, outcomes: failed)) }
        thread.withLock { stalledCount = stalled.count + (unresolved?.writes.count ?? 0) }
    }

    /// Tries the stalled persists once if their time has come; on success they are durable and
    /// whatever waited behind them is released.
    private func retryStalled() {
        guard !stalled.isEmpty, MonotonicInstant.now() >= retryAt else { return }
        let started = RuntimeMetrics.now
        let applied: AppliedWrites
        do {
            // A held persist's claim (a session's first write) may find held drops too.
            applied = try shared?.apply(stalled, resolvingConflicts: { _, _ in nil })
                ?? AppliedWrites(outcomes: try store.apply(stalled))
        } catch let unknown as CommitOutcomeUnknown {
            // The retry's own COMMIT went unanswered: held and asked about like any other.
            let held = stalled
            stalled.removeAll()
            let sequence = stalledSequence
            stalledSequence = nil
            hold(held, sequence: sequence, unknown: unknown)
            return
        } catch let error as NodeRevoked {
            becomeRevoked(error.node, reason: "\(error)")
            return
        } catch {
            stallReason = "\(error)"
            retryAt = .after(milliseconds: Int(backoff.failed()))
            logLimits.log(logger, .warning, "store still unavailable", metadata: ["writes": "\(stalled.count)", "error": "\(error)"],
                          now: Self.nowMs)
            return
        }
        let committedAt = RuntimeMetrics.now
        let suppressed = logLimits.reset("store still unavailable")
        logger.notice("store available again; held writes committed",
                      metadata: ["writes": "\(stalled.count)", "retriesNotLogged": "\(suppressed)"])
        thread.withLock {
            commits += 1
            committedWrites += stalled.count
            durations.observe(nanoseconds: committedAt - started)
            stalledCount = 0
        }
        let durable = stalledSequence
        // Held keyed persists say whether they went in (another node's attempt may have won meanwhile).
        let reported = Self.reported(stalled).map { ($0, applied.outcomes[$0] ?? .failed("no outcome reported")) }
        stalled.removeAll()
        stalledSequence = nil
        onApplied(StoreReport(durable: durable, outcomes: reported, heldDropsFound: applied.heldDropsFound,
                              committedAt: committedAt))
    }

    /// A load refused because the store cannot be reached.
    static func unavailable(_ request: LoadRequest, _ reason: String) -> LoadResult {
        let failure = "the store is unavailable: \(reason)"
        switch request {
        case .document(let id, _): return .document(id, nil, failure: failure)
        case .preferences(let domain): return .preferences(domain, nil, failure: failure)
        case .preferenceChanges(let domain, _): return .preferenceChanges(domain, nil, failure: failure)
        case .operations(let id, _): return .operations(id, nil, failure: failure)
        case .recordChanges: return .recordChanges(nil, failure: failure)
        case .reserveRequestKeys(let keys, _, _): return .requestKeysReserved(keys, [:], failure: failure)
        case .records(let sessions, let documents):
            return .records(sessions: sessions, documents: documents, nil, failure: failure)
        case .requestRecords(let slots): return .requestRecords(slots, [], failure: failure)
        case .versions(let read): return .versions(read, nil, failure: failure)
        case .heldDrops(let session, _): return .heldDrops(session, [], failure: failure)
        }
    }
}
