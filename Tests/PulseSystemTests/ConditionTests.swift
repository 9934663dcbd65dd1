import Dispatch
import Foundation
import PulseSystem
import Testing

/// `Condition`: waits until its predicate holds, loses no wake, gives up at its deadline.
@Suite struct ConditionTests {
    private struct Queue {
        var items: [Int] = []
        var producersLeft: Int
    }

    @Test func everyItemReachesExactlyOneConsumer() {
        let producers = 4, perProducer = 2_000, consumers = 3
        let queue = Condition(Queue(producersLeft: producers))
        let taken = Condition([Int]())
        DispatchQueue.concurrentPerform(iterations: producers + consumers) { n in
            if n < producers {
                for i in 0..<perProducer { queue.withLock(waking: .one) { $0.items.append(n * perProducer + i) } }
                queue.withLock(waking: .all) { $0.producersLeft -= 1 }
            } else {
                var mine: [Int] = []
                while let item = queue.wait(until: { !$0.items.isEmpty || $0.producersLeft == 0 }, { $0.items.popLast() }) {
                    mine.append(item)
                }
                taken.withLock { $0 += mine }
            }
        }
        #expect(taken.withLock { $0.sorted() } == Array(0..<(producers * perProducer)))
    }

    /// Ping-pong between two threads, each wake sent right after the other parks or just before: none is lost
    /// (a lost one would hang the test at its first occurrence).
    @Test func aWakeBetweenTheCheckAndTheParkIsNotLost() {
        let turn = Condition(0)
        let rounds = 20_000
        let done = DispatchSemaphore(value: 0)
        Thread {
            for round in stride(from: 1, to: rounds, by: 2) {
                turn.wait(until: { $0 == round }) { _ in }
                turn.withLock(waking: .all) { $0 += 1 }
            }
            done.signal()
        }.start()
        for round in stride(from: 0, to: rounds, by: 2) {
            turn.wait(until: { $0 == round }) { _ in }
            turn.withLock(waking: .all) { $0 += 1 }
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(turn.withLock { $0 } == rounds)
    }

    @Test func givesUpAtTheTimeoutAndStillRunsTheBody() {
        let flag = Condition(false)
        let start = DispatchTime.now()
        let seen = flag.wait(until: { $0 }, timeout: 0.2) { $0 }
        let waited = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        #expect(!seen)
        #expect(waited >= 0.19 && waited < 5)
        // A timeout already past does not wait at all; a ready state does not wait either.
        #expect(flag.wait(until: { $0 }, timeout: -1) { $0 } == false)
        flag.withLock { $0 = true }
        #expect(flag.wait(until: { $0 }, timeout: 60) { $0 })
    }

    @Test func wakeOneWakesOneAndWakeAllTheRest() {
        let open = Condition(0)  // how many waiters may go on
        let gone = Condition(0)
        let waiters = 3
        for _ in 0..<waiters {
            Thread {
                open.wait(until: { $0 > 0 }) { $0 -= 1 }
                gone.withLock(waking: .all) { $0 += 1 }
            }.start()
        }
        open.withLock(waking: .one) { $0 += 1 }
        #expect(gone.wait(until: { $0 >= 1 }, timeout: 10) { $0 } == 1)
        // Nobody else was let through: the others are still parked.
        #expect(gone.wait(until: { $0 >= 2 }, timeout: 0.2) { $0 } == 1)
        open.withLock(waking: .all) { $0 += waiters - 1 }
        #expect(gone.wait(until: { $0 == waiters }, timeout: 10) { $0 } == waiters)
    }

    /// A change made in a `withLock` that woke no one reaches a waiter through `wake`.
    @Test func wakeAfterASilentChange() {
        let value = Condition(0)
        let seen = DispatchSemaphore(value: 0)
        Thread {
            value.wait(until: { $0 == 1 }) { _ in }
            seen.signal()
        }.start()
        Thread.sleep(forTimeInterval: 0.05)
        value.withLock { $0 = 1 }
        value.wake(.all)
        #expect(seen.wait(timeout: .now() + 10) == .success)
    }
}
