import Foundation
import PanesCore
@testable import PanesPostgres
import PanesPostgresTestSupport
import Testing

/// Two nodes (two stores, two connections) committing to the same channels at once.
@Suite(.enabled(if: !TestDatabase.isSkipped, "PANES_TEST_POSTGRES=skip")) struct PostgresStoreRaceTests {
    @Test func ofTwoNodesRacingOnAChannelExactlyOneCommitsEachRound() throws {
        let database = try TestDatabase()
        let nodes = [try PostgresStore(url: database.url), try PostgresStore(url: database.url)]
        let domain = PreferenceDomain(workspace: "acme", user: "ada")
        let document = DocumentID("doc_1")
        try nodes[0].apply([.createDocument(DocumentRecord(id: document, workspace: "acme", title: "t", createdAt: 0,
                                                           createdBy: "ada", modifiedAt: 0, revision: 0, length: 0),
                                            text: "")])
        let rounds = 60
        for round in 1...rounds {
            let version = Int64(round)
            let outcomes = ResultBox()
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for (index, node) in nodes.enumerated() {
                group.enter()
                Thread.detachNewThread { [node] in
                    defer { group.leave() }
                    start.wait()
                    var operation = TextOperation()
                    operation.retain(round - 1)
                    operation.insert("\(index)")
                    let writes: [StoreWrite] = [
                        .commit(Commit(id: CommitID(1), channel: .preferences(domain), base: version - 1, commands: [
                            .putPreference(domain, keyPath: "winner", value: .int(Int64(index)), version: version)])),
                        .commit(Commit(id: CommitID(2), channel: .document(document), base: version - 1, commands: [
                            .appendOperation(document, StoredOperation(revision: version, operation: operation,
                                                                       opId: "n\(index):\(round)",
                                                                       author: DocumentAuthor(scene: "s", user: "u", name: "n"),
                                                                       createdAt: 0), length: round)])),
                    ]
                    do {
                        let result = try node.apply(writes)
                        results(result, index, outcomes)
                    } catch {
                        outcomes.append("error \(error)")
                    }
                }
            }
            start.signal()
            start.signal()
            group.wait()
            let values = outcomes.values.compactMap { $0 }.sorted()
            // Either node may win each channel, but never both and never neither.
            #expect(values.filter { $0.hasSuffix("1 committed") }.count == 1, "round \(round): \(values)")
            #expect(values.filter { $0.hasSuffix("2 committed") }.count == 1, "round \(round): \(values)")
            #expect(values.filter { $0.hasSuffix("conflict") }.count == 2, "round \(round): \(values)")
        }
        let state = try nodes[1].loadState()
        #expect(state.preferences[domain]?.version == Int64(rounds))
        #expect(state.documents.first?.revision == Int64(rounds))
        #expect(try nodes[0].loadOperations(document, after: 0)?.count == rounds)
    }

    private func results(_ outcomes: [CommitID: CommitOutcome], _ node: Int, _ box: ResultBox) {
        for (id, outcome) in outcomes {
            box.append("node \(node) commit \(id.rawValue) \(outcome == .committed ? "committed" : "conflict")")
        }
    }
}

/// A connection lost while COMMIT is under way: whether the batch is in is asked, not guessed.
@Suite(.enabled(if: !TestDatabase.isSkipped, "PANES_TEST_POSTGRES=skip")) struct PostgresLostCommitTests {
    static func session(_ id: String) -> SceneSession {
        SceneSession(id: SessionID(id), secretHash: "h", owner: OwnerKey(workspace: "acme", user: "ada"),
                     role: .window, configuration: "workspace", createdAt: 0, lastActiveAt: 0)
    }

    @Test func aBatchWhoseCommitReplyWasLostIsReportedAppliedNotRetried() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        let document = DocumentRecord(id: DocumentID("doc_1"), workspace: "acme", title: "t", createdAt: 0,
                                      createdBy: "ada", modifiedAt: 0, revision: 0, length: 0)
        store.connection.commitFault = .replyLost
        // It committed: no error, so the caller never sends createDocument again (which would fail).
        try store.apply([.createDocument(document, text: "x"), .putSession(Self.session("s1"))])
        #expect(try store.loadState().documents == [document])
    }

    @Test func aBatchWhoseCommitNeverArrivedThrowsAndLeavesNothing() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        store.connection.commitFault = .neverArrived
        #expect(throws: PostgresError.self) { try store.apply([.putSession(Self.session("s1"))]) }
        #expect(try store.loadState().sessions.isEmpty)
        try store.apply([.putSession(Self.session("s1"))])
        #expect(try store.loadState().sessions.map(\.id) == [SessionID("s1")])
    }
}
