// Threading: the store thread's (see StoreWorker.swift); the statistics are written under the
// thread's lock.
import Foundation
import Logging
import PanesCore
import PanesThreads

extension StoreWorker {
    /// Consecutive writes of a batch, committed as one transaction.
    private struct Run {
        var writes: [StoreWrite] = []
        /// The highest durability sequence among them.
        var lastSequence: UInt64?

        mutating func clear() {
            writes.removeAll(keepingCapacity: true)
            lastSequence = nil
        }
    }

    /// Commits a batch: consecutive writes as one transaction; a read ends the run first, so it
    /// sees every write submitted before it and none after.
    /// - Returns: nil when all of it went through, else the index of the first work not done
    ///   (after a failed transaction, which has been stalled, held or reported).
    func commit(_ batch: [Work]) -> Int? {
        var run = Run()
        // By index: each work read in place, its write copied once, into the run (a copy of
        // the whole work per step, destroyed after it, was a copy of every write, issue 27).
        for index in batch.indices {
            switch batch[index] {
            case .write(let write, let sequence):
                run.writes.append(write)
                if let sequence { run.lastSequence = sequence }
            case .load(let request):
                guard flush(&run) else { return index }
                onLoaded(store.perform(request))
            }
        }
        return flush(&run) ? nil : batch.count
    }

    /// Commits the run's writes; false when they failed (and, when stalling, were kept).
    private func flush(_ run: inout Run) -> Bool {
        guard !run.writes.isEmpty else { return true }
        defer { run.clear() }
        let started = RuntimeMetrics.now
        let applied: AppliedWrites
        switch apply(&run.writes) {
        case .success(let done):
            applied = done
        case .failure(let failure):
            failed(run.writes, sequence: run.lastSequence, failure)
            return false
        }
        let committedAt = RuntimeMetrics.now
        thread.withLock {
            commits += 1
            committedWrites += run.writes.count
            durations.observe(nanoseconds: committedAt - started)
        }
        let ordered = Self.reported(run.writes).map { ($0, applied.outcomes[$0] ?? .failed("no outcome reported")) }
        // Quiet persists and signals release nothing: no need to wake the service thread (a
        // claim, whose held drops those would be, is never quiet).
        if run.lastSequence != nil || !ordered.isEmpty || !applied.heldDropsFound.isEmpty {
            onApplied(StoreReport(durable: run.lastSequence, outcomes: ordered, heldDropsFound: applied.heldDropsFound,
                                  committedAt: committedAt))
        }
        return true
    }

    /// A transaction failed: the node was revoked, the process stops (`.fatal`), its outcome
    /// is held until known, or its writes are stalled.
    private func failed(_ writes: [StoreWrite], sequence: UInt64?, _ failure: StoreApplyFailure) {
        if let node = failure.revoked {
            becomeRevoked(node, reason: failure.reason)
            absorb(writes.map { Work.write($0, sequence: nil) }[...])
        } else if policy == .fatal {
            // Nothing is answered: the runtime stops, and a retry (with its key) finds
            // whatever a commit of unknown outcome left.
            onFailure("the store could not commit \(writes.count) writes: \(failure)")
        } else if let unknown = failure.unknown {
            hold(writes, sequence: sequence, unknown: unknown)
        } else {
            stall(writes, sequence: sequence, reason: failure.reason)
        }
    }

    /// Tries a few times (a busy disk, a transient lock), then gives up. Under `.fatal` the
    /// runtime then treats the store as failed, because acknowledging without durability would
    /// break the promise every acknowledgement makes; under `.stall` one more try is made (a
    /// connection found dead reconnects on the next call) before the writes are held.
    /// - Parameter writes: a conflicting commit resolved on the way is replaced by its retry
    ///   (or dropped), whether the transaction then commits or not: the hub has moved on to it.
    private func apply(_ writes: inout [StoreWrite]) -> Result<AppliedWrites, StoreApplyFailure> {
        let attempts = policy == .fatal ? 5 : 2
        var reason = ""
        for attempt in 1...attempts {
            var resolved: [CommitID: Commit?] = [:]
            defer { if !resolved.isEmpty { Self.replace(resolved, in: &writes) } }
            do {
                // A shared store's apply says what its claims found too (`AppliedWrites`).
                guard let shared else { return .success(AppliedWrites(outcomes: try store.apply(writes))) }
                return .success(try shared.apply(writes) { commit, operations in
                    guard let onConflict else { return nil }
                    let asked = RuntimeMetrics.now
                    let retry = onConflict(commit, operations)
                    resolved[commit.id] = .some(retry)
                    let waited = RuntimeMetrics.now - asked
                    thread.withLock { waits.observe(nanoseconds: waited) }
                    return retry
                })
            } catch let error as NodeRevoked {
                return .failure(StoreApplyFailure(reason: "\(error)", revoked: error.node))
            } catch let unknown as CommitOutcomeUnknown {
                // It may have committed: trying the same writes again could apply them twice.
                logger.error("store commit's outcome is unknown", metadata: ["attempt": "\(attempt)", "error": "\(unknown)"])
                return .failure(StoreApplyFailure(reason: "\(unknown)", unknown: unknown))
            } catch {
                // The store knows nothing of it was applied (`Store.apply`): safe to try again.
                reason = "\(error)"
                logLimits.log(logger, .error, "store commit failed", metadata: ["attempt": "\(attempt)", "error": "\(error)"],
                              now: Self.nowMs)
                if attempt < attempts { Thread.sleep(forTimeInterval: 0.05 * Double(attempt)) }
            }
        }
        return .failure(StoreApplyFailure(reason: reason))
    }

    /// What a transaction reports an outcome for, in the order written: each commit, and each
    /// keyed persist of a cluster node (`CoordinationCommand.recordKeyedRequest`).
    /// Appended into one array as they are found: a `flatMap` made an array for every write,
    /// an empty one for each quiet persist (~360 instructions a resume in a storm, issue 27).
    static func reported(_ writes: [StoreWrite]) -> [CommitID] {
        var reported: [CommitID] = []
        for index in writes.indices {
            switch writes[index] {
            case .commit(let commit):
                reported.append(commit.id)
            case .persist(let commands):
                for command in commands {
                    if let report = command.keyedReport { reported.append(report) }
                }
            case .signal:
                break
            }
        }
        return reported
    }

    /// Puts each resolved commit's retry in its place (or takes it out when there was none).
    static func replace(_ resolved: [CommitID: Commit?], in writes: inout [StoreWrite]) {
        writes = writes.compactMap { write in
            guard case .commit(let commit) = write, let retry = resolved[commit.id] else { return write }
            return retry.map(StoreWrite.commit)
        }
    }
}
