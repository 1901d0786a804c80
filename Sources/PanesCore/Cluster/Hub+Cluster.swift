import Logging

/// Following what other nodes write to the shared store. A `ChangeNotice` is only a hint: the
/// node reads the change itself from the store's logs (preference changes, document
/// operations, the record sequence), applies it as if it had been made here, and tells its
/// own scenes. Applying in log order with the logged versions is what makes every node tell
/// every observer the same changes, in the same order, with the same versions.
///
/// A channel with this node's own commit in flight is left alone until the outcome is in:
/// either the commit wins (and the notice was about it, or the next catch-up reads the rest)
/// or it conflicts, and the conflict path reads what the other node wrote.
extension Hub {
    mutating func followNotice(_ notice: ChangeNotice) {
        switch notice {
        case .channel(.preferences(let domain), let version):
            follow(PreferenceChannel.self, domain, to: version)
        case .channel(.document(let id), let revision):
            followDocument(id, to: revision)
        case .documentEdited(let id, let revision, let length, let modifiedAt):
            followDocument(id, to: revision, length: length, modifiedAt: modifiedAt)
        case .channel(.coordination(.drag), _):
            break  // the winner of a drag's ending tells every node itself (`dragEnded`)
        case .channel(.coordination(.session), _), .channel(.coordination(.sessionRecord), _), .records:
            if case .records(let cursor) = notice, cursor <= cluster.recordCursor { return }
            loadRecordChanges()
        case .signal(let signal):
            received(signal)
        case .nodesAlive(let nodes, let readBegan):
            nodesAlive(nodes, readBegan: readBegan)
        case .nodesExpired(let nodes):
            nodesExpired(nodes)
        case .nodesChecked(let gone):
            nodesChecked(gone)
        case .leaseLost:
            leaseLost()
        case .leaseRegained:
            cluster.leaseLost = false
        case .resubscribed:
            // The store answers again: reads waiting out a backoff go now. Anything may have
            // moved while nobody listened: look at everything held.
            cluster.readBackoff.succeeded()
            cluster.recordRetryAt = nil
            loadRecordChanges()
            // Lists other nodes sent meanwhile were missed: forget what they told (presence:
            // keep it, marked stale, until the answers say what holds) and ask again. A node
            // that asked while nobody here listened got no answer: tell it too.
            forgetRemoteScenes()
            forgetRemotePeople()
            markRemotePresenceStale()
            signal(.scenesWanted, to: nil)
            retellScenes(now: monotonic())
            sharePeople(to: nil)
            retellPresence(to: nil)
            // Domains held here, and those observed here that another node may have started.
            for domain in preferences.followedDomains {
                follow(PreferenceChannel.self, domain, to: .max)
            }
            for id in documents.open.keys.sorted() { followDocument(id, to: .max) }
        }
    }

    // MARK: Preferences

    /// A catch-up's changes: applied in version order as long as they follow on from the
    /// version held; a gap (the log was pruned) reads the whole domain instead.
    mutating func preferenceChangesLoaded(_ domain: PreferenceDomain, _ changes: [PreferenceChange]?, failure: String?) {
        guard failure == nil, let changes else {
            if failure == nil {
                // Pruned past what this node holds: the whole domain, diffed, is the best there is.
                effects.append(.load(.preferences(domain)))
                return
            }
            preferencesLoaded(domain, nil, failure: failure)
            return
        }
        cluster.readBackoff.succeeded()
        let afterConflict = endCatchUp(PreferenceChannel.self, domain)
        let kind: DomainKind = domain.user == nil ? .workspace : .user
        var applied = 0
        for change in changes.sorted(by: { $0.version < $1.version }) {
            let held = preferences.version(of: domain)
            if change.version <= held { continue }
            guard change.version == held + 1 else {
                logger.warning("preference log has a gap; reading the whole domain",
                               metadata: ["domain": "\(domain)", "held": "\(held)", "next": "\(change.version)"])
                commits.preferenceWriters.continueCatchUp(domain)
                effects.append(.load(.preferences(domain)))
                return
            }
            applied += 1
            guard let key = try? KeyPath(change.keyPath) else {
                preferences.apply(version: change.version, in: domain)
                continue
            }
            let old = preferences.effective(domain, kind, key)?.value
            preferences.apply(change.keyPath, change.value, version: change.version, in: domain)
            notifyObservers(of: key, in: domain, kind: kind, version: change.version, old: old)
        }
        caughtUp(PreferenceChannel.self, domain, afterConflict: afterConflict, moved: applied > 0)
    }

    // MARK: Documents

    /// Reads the operations other nodes appended to an open document. A document not open
    /// here has its record moved, for the lists: its revision, and with a notice that says them
    /// (`ChangeNotice.documentEdited`) its length and last edit, which list observers here then
    /// hear of as a modification (at most every `documentListIntervalMs`, as for one edited
    /// here). Without them a list on this node showed the new revision with the old length,
    /// and never told its observers.
    mutating func followDocument(_ id: DocumentID, to revision: Int64, length: Int? = nil, modifiedAt: Millis? = nil) {
        guard documents.open[id] != nil else {
            guard revision != .max else { return }
            let moved = documents.updateRecord(id) { record -> Bool in
                guard revision > record.revision else { return false }
                record.revision = revision
                if let length { record.length = length }
                if let modifiedAt { record.modifiedAt = max(record.modifiedAt, modifiedAt) }
                return true
            }
            if moved == true, length != nil { markModified(id, preview: nil) }
            return
        }
        follow(DocumentChannel.self, id, to: revision)
    }

    /// Operations another node committed: applied and sent to this node's scenes of the
    /// document, as the single-node conflict path does with a whole reload.
    mutating func operationsLoaded(_ id: DocumentID, _ operations: [StoredOperation]?, failure: String?) {
        guard failure == nil, let operations else {
            if failure == nil, documents.open[id] != nil {
                // Compacted past this node's revision (or gone): the snapshot path decides.
                effects.append(.load(.document(id, retention: OpenDocument.Retention(settings).loadCount)))
                return
            }
            documentCaughtUp(id, nil, failure: failure ?? "document \(id) is no longer stored")
            return
        }
        let afterConflict = endCatchUp(DocumentChannel.self, id)
        let applied = applyCommitted(operations, to: id)
        retryOpens(document: id)
        caughtUp(DocumentChannel.self, id, afterConflict: afterConflict, moved: applied > 0)
    }
}
