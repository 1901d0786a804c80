/// `openDocument`s that another node is ahead of: the document or link was made there a
/// moment ago, or the client saw newer revisions there. They wait (`openWaitsForOtherNodes`)
/// until this node has read as far, then are answered as a single node would.
extension Hub {
    enum OpenWait { case records, operations(Int64) }

    /// Whether an open must wait: the document is not known here yet (made on another node a
    /// moment ago), or the client names a revision newer than this node holds.
    /// - Parameter link: a link token this node does not know may have been made on another
    ///   node: the open waits for the records too.
    func openMustWait(_ id: DocumentID, revision: Int64?, link: String? = nil, scene: Scene) -> OpenWait? {
        guard let record = documents.records[id] else { return .records }
        if let link, rights.link(tokenHash: secretHasher.hash(link)) == nil { return .records }
        guard record.belongs(to: scene.owner.workspace), let revision else { return nil }
        // Not held here: the load reads the store, which has every committed revision.
        guard let open = documents.open[id] else { return nil }
        return revision > open.revision ? .operations(revision) : nil
    }

    /// Answers the opens that waited, once their document's record or operations are here.
    /// - Parameters:
    ///   - finished: a record load just finished (its number): opens of a document still
    ///     unknown after it get the error a single node gives.
    ///   - document: a catch-up of that document just finished: opens still ahead of it get
    ///     their error unless another catch-up is on its way.
    mutating func retryOpens(records finished: Int? = nil, document: DocumentID? = nil) {
        guard !cluster.openWaiters.isEmpty else { return }
        var still: [OpenWaiter] = []
        for waiter in cluster.openWaiters {
            guard let scene = scenes[waiter.scene] else { continue }
            let answer: Bool
            switch openMustWait(waiter.document, revision: waiter.revision, link: waiter.link, scene: scene) {
            case .records?:
                answer = finished.map { waiter.after < $0 } ?? false
            case .operations?:
                answer = document == waiter.document && commits.documentWriters[waiter.document]?.busy != true
                    && !commits.documentWriters.isBehind(waiter.document)
            case nil:
                answer = true
            }
            guard answer else {
                still.append(waiter)
                continue
            }
            do throws(PanesError) {
                if let result = try openDocument(waiter.document, revision: waiter.revision, pending: waiter.pending,
                                                 link: waiter.link, requestID: waiter.requestID, scene: scene,
                                                 mayWait: false) {
                    send(.reply(waiter.requestID, result: result), to: scene.connection)
                }
            } catch {
                fail(waiter.requestID, request: "openDocument", error, to: scene.connection)
            }
        }
        cluster.openWaiters = still
    }
}
