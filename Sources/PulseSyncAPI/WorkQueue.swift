import Foundation
import PulseSystem

/// A few threads that run the requests which write (enroll, diag, staff changes) off the server's event
/// loops: a commit waits for an fsync (synchronous=FULL), and a server thread waiting for it would hold
/// every connection it serves, open event streams included. The request is answered with an
/// `HTTPDeferredResponse` completed from here, so its connection waits suspended, holding no thread.
///
/// Bounded: past `maxQueued` waiting jobs `submit` refuses (the route answers 503 with Retry-After),
/// rather than letting a burst queue minutes of work.
public final class WorkQueue: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var head = 0
        var stopping = false
        var running = 0
    }
    private let state = Condition(State())
    let maxQueued: Int
    /// Told each job's running time in seconds (nil: no clock is read).
    let finished: (@Sendable (Double) -> Void)?

    public init(threads: Int, maxQueued: Int, name: String, finished: (@Sendable (Double) -> Void)? = nil) {
        self.maxQueued = maxQueued
        self.finished = finished
        for index in 0..<max(1, threads) {
            let thread = Thread { [self] in work() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Queues `job`; false when the queue is full or stopping.
    public func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        state.withLock(waking: .one) { state in
            guard !state.stopping, state.jobs.count - state.head < maxQueued else { return false }
            state.jobs.append(job)
            return true
        }
    }

    /// Jobs waiting for a thread now.
    public var depth: Int { state.withLock { $0.jobs.count - $0.head } }

    /// Runs what is queued, then ends the threads; waits up to `seconds` for the jobs to finish.
    public func drain(within seconds: Double) {
        state.withLock(waking: .all) { $0.stopping = true }
        state.wait(until: { $0.jobs.count - $0.head == 0 && $0.running == 0 }, timeout: seconds) { _ in }
    }

    private func work() {
        while true {
            let next = state.wait(until: { $0.jobs.count - $0.head > 0 || $0.stopping }) { state -> (@Sendable () -> Void)? in
                if state.jobs.count - state.head == 0 { return nil }
                let job = state.jobs[state.head]
                state.head += 1
                if state.head > 1024 && state.head * 2 > state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                state.running += 1
                return job
            }
            guard let job = next else { return }
            if let finished {
                let start = SystemClock.monotonicNanoseconds()
                job()
                finished(Double(SystemClock.monotonicNanoseconds() &- start) / 1e9)
            } else {
                job()
            }
            state.withLock(waking: .all) { $0.running -= 1 }
        }
    }
}
