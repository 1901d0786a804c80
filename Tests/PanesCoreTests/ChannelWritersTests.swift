@testable import PanesCore
import Testing

/// The per-channel bookkeeping of the generic writer (`ChannelWriters`); the writer's effects
/// (commits, catch-up reads, answers) are checked through the hub in `ChannelCommitTests`,
/// `HubPreferencesTests`, `DocumentEditingTests` and `ClusterFollowingTests`.
@Suite struct ChannelWritersTests {
    @Test func aBatchTakesEverythingWaitingOnlyWhenTheChannelIsFree() {
        var writers = ChannelWriters<String, Int>()
        writers.enqueue(1, on: "a")
        writers.enqueue(2, on: "a")
        let batch = writers.nextBatch("a")
        #expect(batch?.items == [1, 2])
        #expect(batch?.writer.waiting == [])
        // The writer is given back with its commit in flight: nothing more is taken meanwhile.
        var writer = batch!.writer
        writer.inFlight = CommitID(1)
        writers["a"] = writer
        writers.enqueue(3, on: "a")
        #expect(writers.isBusy("a"))
        #expect(writers.nextBatch("a") == nil)
        writers.commitEnded("a")
        #expect(writers.nextBatch("a")?.items == [3])
    }

    @Test func writesThatConflictedGoAgainFirst() {
        var writers = ChannelWriters<String, Int>()
        writers.enqueue(3, on: "a")
        writers.requeue([1, 2], on: "a")
        #expect(writers.nextBatch("a")?.items == [1, 2, 3])
    }

    @Test func aNoticeOnABusyChannelIsOwedUntilItIsNoLongerAhead() {
        var writers = ChannelWriters<String, Int>()
        // Nothing held: nothing to follow.
        let unheld = writers.follow("a", to: 5, held: nil)
        #expect(!unheld)
        // Held and free: follow now, only when ahead.
        let notAhead = writers.follow("a", to: 5, held: 5)
        #expect(!notAhead)
        let ahead = writers.follow("a", to: 6, held: 5)
        #expect(ahead)
        // Busy: owed, at the highest version heard of.
        writers.startCatchUp("a", afterConflict: false)
        let busyAhead = writers.follow("a", to: 7, held: 5)
        #expect(!busyAhead)
        let busyLower = writers.follow("a", to: 6, held: 5)
        #expect(!busyLower)
        #expect(writers.isBehind("a"))
        let caughtUpMeanwhile = writers.stillBehind("a", held: 7)
        #expect(!caughtUpMeanwhile)
        #expect(!writers.isBehind("a"))
        writers.markBehind("a", at: 9)
        let owedAgain = writers.stillBehind("a", held: 7)
        #expect(owedAgain)
        // A catch-up that starts pays what was owed.
        writers.startCatchUp("a", afterConflict: false)
        #expect(!writers.isBehind("a"))
    }

    @Test func aCatchUpSaysWhetherItFollowedAConflictOnce() {
        var writers = ChannelWriters<String, Int>()
        writers.startCatchUp("a", afterConflict: true)
        #expect(writers["a"]?.catchingUp == true)
        let afterConflict = writers.endCatchUp("a")
        #expect(afterConflict)
        #expect(writers["a"]?.catchingUp == false)
        let again = writers.endCatchUp("a")
        #expect(!again)
    }

    @Test func anIdleWriterIsSettledAwayAndTakingTheWaitingWritesDropsIt() {
        var writers = ChannelWriters<String, Int>()
        writers.enqueue(1, on: "a")
        writers.settle("a")
        #expect(!writers.isEmpty)
        let taken = writers.takeWaiting("a")
        #expect(taken == [1])
        #expect(writers.isEmpty)
        writers.startCatchUp("b", afterConflict: false)
        _ = writers.endCatchUp("b")
        writers.settle("b")
        #expect(writers.isEmpty)
    }
}
