import Logging

/// Automatic checkpoints: a version of a document taken by the server after a pause in
/// editing (`versionCheckpointPauseMs` with no operation) and every
/// `versionCheckpointOperations` operations, and when the document leaves memory with
/// operations not in a checkpoint yet. The oldest go past `maxCheckpointsPerDocument`.
///
/// Each node counts the operations it committed itself (its own windows' edits): on a cluster,
/// the nodes editing a document each checkpoint what they did, with no coordination.
extension Hub {
    /// Counts a commit's operations towards the document's next checkpoint.
    mutating func countTowardsCheckpoint(_ id: DocumentID, operations: Int, lastUser: String) {
        guard operations > 0, settings.versionCheckpointOperations > 0 || settings.versionCheckpointPauseMs > 0 else { return }
        let first = versions.progress[id] == nil
        var progress = versions.progress[id] ?? CheckpointProgress()
        progress.operations += operations
        progress.lastUser = lastUser
        progress.lastEditAt = monotonic()
        versions.progress[id] = progress
        if settings.versionCheckpointOperations > 0, progress.operations >= settings.versionCheckpointOperations {
            takeCheckpoint(id)
        } else if first, settings.versionCheckpointPauseMs > 0 {
            versions.pauseDeadlines.push(id, at: progress.lastEditAt + Millis(settings.versionCheckpointPauseMs))
        }
    }

    /// Checkpoints the documents quiet for `versionCheckpointPauseMs`.
    mutating func versionsTick(now: Millis) {
        for (_, id) in versions.pauseDeadlines.popDue(now: now) {
            guard let progress = versions.progress[id] else { continue }
            let due = progress.lastEditAt + Millis(settings.versionCheckpointPauseMs)
            if due > now {
                versions.pauseDeadlines.push(id, at: due)  // edited since: wait for the pause
            } else {
                takeCheckpoint(id)
            }
        }
    }

    /// Keeps the document's text now as a checkpoint, if operations were committed here since
    /// the last one (or `force`) and the text is held.
    /// - Parameter by: who the checkpoint names when no operation was committed here since.
    mutating func takeCheckpoint(_ id: DocumentID, force: Bool = false, by user: String = "") {
        let progress = versions.progress.removeValue(forKey: id)
        guard progress != nil || force, let document = documents.open[id] else { return }
        let version = VersionRecord(id: ids.token("ver_"), document: id, kind: .checkpoint, revision: document.revision,
                                    name: nil, createdAt: now(), createdBy: progress?.lastUser ?? user,
                                    length: document.length)
        persist(.saveVersion(version, text: document.text, keepCheckpoints: settings.maxCheckpointsPerDocument))
        logger.debug("checkpoint taken", metadata: ["document": "\(id)", "revision": "\(document.revision)",
                                                    "operations": "\(progress?.operations ?? 0)"])
    }
}
