import Foundation

/// A few threads that run the requests which write (enroll, diag, staff changes) off the server's event
/// loops: a commit waits for an fsync (synchronous=FULL), and a server thread waiting for it would hold
/// every connection it serves, open event streams included. The request is answered with an
/// `HTTPDeferredResponse` completed from here, so its connection waits suspended, holding no thread.
///
/// Bounded: past `maxQueued` waiting jobs `submit` refuses (the route answers 503 with Retry-After),
/// rather than letting a burst queue minutes of work.
final class WorkQueue: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0
    private var stopping = false
    private var running = 0
    let maxQueued: Int

    init(threads: Int, maxQueued: Int, name: String) {
        self.maxQueued = maxQueued
        for index in 0..<max(1, threads) {
            let thread = Thread { [self] in work() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Queues `job`; false when the queue is full or stopping.
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping, jobs.count - head < maxQueued else { return false }
        jobs.append(job)
        condition.signal()
        return true
    }

    /// Runs what is queued, then ends the threads; waits up to `seconds` for the jobs to finish.
    func drain(within seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        stopping = true
        condition.broadcast()
        while jobs.count - head > 0 || running > 0 {
            if !condition.wait(until: deadline) { break }
        }
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.count - head == 0 && !stopping { condition.wait() }
            if jobs.count - head == 0 {
                condition.unlock()
                return
            }
            let job = jobs[head]
            head += 1
            if head > 1024 && head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            running += 1
            condition.unlock()
            job()
            condition.lock()
            running -= 1
            condition.broadcast()
            condition.unlock()
        }
    }
}
