import Foundation
import PanesCore
@testable import PanesServer
import Testing

/// The hand-over between the store thread, holding a document's lock after a conflict, and the
/// service thread that makes the retry: the store thread waits at most `conflictRetryWaitMs`,
/// and a retry made after it stopped waiting must go the ordinary way (`answer` says so), never
/// be lost or applied twice.
@Suite struct ConflictResolutionTests {
    static let retry = Commit(id: CommitID(7), channel: .document(DocumentID("doc_1")), base: 3, commands: [])

    @Test func aRetryHandedOverInTimeIsTakenByTheWaitingStoreThread() {
        let resolution = ConflictResolution()
        let answered = Thread { _ = resolution.answer(Self.retry) }
        answered.start()
        #expect(resolution.wait(timeoutMs: 60_000)?.id == Self.retry.id)
        #expect(!resolution.answer(Self.retry), "answered once: a second answer is not taken")
    }

    @Test func noRetryAtAllIsAnAnswerToo() {
        let resolution = ConflictResolution()
        #expect(resolution.answer(nil), "the store thread has not stopped waiting yet")
        #expect(resolution.wait(timeoutMs: 60_000) == nil)
    }

    @Test func aRetryMadeAfterTheStoreThreadGaveUpIsLeftToTheCaller() {
        let resolution = ConflictResolution()
        // Nobody answers: the store thread stops waiting and lets the lock go without a retry.
        #expect(resolution.wait(timeoutMs: 1) == nil)
        // The hub's retry, made late, is not taken: the runtime submits it as an ordinary commit.
        #expect(!resolution.answer(Self.retry))
    }
}
