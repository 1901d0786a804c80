import Foundation
import PanesThreads
import Synchronization
import Testing

/// The one thread type the server's store, heartbeat and listener run on.
@Suite struct ServiceThreadTests {
    @Test func stopWaitsForTheLoopToFinishWhatItWasDoing() {
        let thread = ServiceThread(name: "test")
        let done = Mutex(false)
        thread.start {
            thread.withLock { while !thread.stopRequested { thread.wait(until: nil) } }
            // Work after the stop was seen (the store thread commits what is pending).
            Thread.sleep(forTimeInterval: 0.05)
            done.withLock { $0 = true }
        }
        thread.stop()
        #expect(done.withLock { $0 }, "stop returned before the loop did")
        thread.stop()
    }

    @Test func wakeEndsAWaitWithItsChangeMade() {
        let thread = ServiceThread(name: "test")
        nonisolated(unsafe) var asked = 0
        let seen = DispatchSemaphore(value: 0)
        let answer = Mutex(0)
        thread.start {
            let value = thread.withLock {
                while asked == 0 { thread.wait(until: .after(milliseconds: 60_000)) }
                return asked
            }
            answer.withLock { $0 = value }
            seen.signal()
            thread.withLock { while !thread.stopRequested { thread.wait(until: nil) } }
        }
        thread.wake { asked = 7 }
        #expect(seen.wait(timeout: .now() + 10) == .success, "the wait was not woken")
        #expect(answer.withLock { $0 } == 7)
        thread.stop()
    }

    @Test func stopInterruptsAWaitOutsideTheLockAfterSettingTheFlag() {
        let flagSetFirst = Mutex<Bool?>(nil)
        nonisolated(unsafe) var owner: ServiceThread?
        let thread = ServiceThread(name: "test", interrupt: {
            flagSetFirst.withLock { if $0 == nil { $0 = owner?.isStopping } }
        })
        owner = thread
        thread.start { thread.withLock { while !thread.stopRequested { thread.wait(until: nil) } } }
        thread.stop()
        #expect(flagSetFirst.withLock { $0 } == true)
        owner = nil
    }

    @Test func aPauseEndsAtItsDeadlineOrAtOnceOnStop() {
        let thread = ServiceThread(name: "test")
        let started = MonotonicInstant.now()
        #expect(thread.pause(until: .after(milliseconds: 30)))
        #expect(MonotonicInstant.now().milliseconds(since: started) >= 30)
        let finished = DispatchSemaphore(value: 0)
        let kept = Mutex(true)
        thread.start {
            let result = thread.pause(until: .after(milliseconds: 60_000))
            kept.withLock { $0 = result }
            finished.signal()
        }
        let stopping = MonotonicInstant.now()
        thread.stop()
        #expect(finished.wait(timeout: .now() + 1) == .success)
        #expect(!kept.withLock { $0 }, "the pause did not say the thread was stopping")
        #expect(MonotonicInstant.now().milliseconds(since: stopping) < 10_000)
    }

    @Test func aThreadStoppedBeforeItStartedNeverRuns() {
        let thread = ServiceThread(name: "test")
        thread.stop()
        let ran = Mutex(false)
        thread.start { ran.withLock { $0 = true } }
        Thread.sleep(forTimeInterval: 0.02)
        #expect(!ran.withLock { $0 })
    }
}
