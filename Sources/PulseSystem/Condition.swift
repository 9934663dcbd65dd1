#if canImport(Glibc)
import Glibc
#endif

/// A lock around a state that threads can also wait on: the one waiting idiom of this project, where a thread
/// must block until another changes the state (a free connection in a pool, a queued job, an answer). Where
/// nobody waits and what passes through the lock is `Sendable`, use `Mutex<State>`.
///
///     let queue = Condition(Queue())
///     queue.withLock(waking: .one) { $0.jobs.append(job) }                             // a producer
///     let job = queue.wait(until: { !$0.jobs.isEmpty }) { $0.jobs.removeFirst() }      // a consumer
///
/// The state is reached only inside the lock, as with `Mutex`. A waiter checks its predicate under the lock and
/// waits on a condition variable that releases the lock atomically, so a change made between the check and the
/// wait cannot be missed; a woken waiter checks again (waking is only a hint: several may wake for one free
/// place, and condition variables wake spuriously). Timed waits run on the monotonic clock, so a clock set
/// back or forward does not stretch or cut them.
///
/// Unlike `Mutex`, the state need not be `Sendable` and the closures do not take it `sending`: a pool hands a
/// connection to one caller at a time and a queue a job to one worker, which region checking cannot follow.
/// What goes in or out must be used by one thread at a time, as with the NSCondition this replaces.
// @unchecked: a pthread mutex guards `state`; values handed in and out belong to one thread at a time (above).
public final class Condition<State>: @unchecked Sendable {
    /// Whom a change wakes.
    public enum Waking: Sendable {
        /// One waiting thread (every waiter waits for the same kind of change).
        case one
        /// Every waiting thread (waiters wait for different things, or all can go on).
        case all
    }

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var state: State

    public init(_ initial: State) {
        state = initial
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the state, holding the lock; wakes no one.
    public func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Runs `body` with the state, holding the lock, then wakes `waking` waiters (also when `body` throws).
    public func withLock<Result, Failure: Error>(
        waking: Waking, _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer {
            wake(waking)
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Wakes `waking` waiters without changing the state (after a change made in a `withLock` that woke no one).
    public func wake(_ waking: Waking) {
        switch waking {
        case .one: pthread_cond_signal(condition)
        case .all: pthread_cond_broadcast(condition)
        }
    }

    /// Waits until `ready` holds for the state, or until `timeout` seconds passed, then runs `body` with the
    /// state in the same hold of the lock. `body` runs in either case: check again inside it when a timeout is
    /// given (`ready` is false there only when the time ran out).
    /// - Parameter timeout: nil waits as long as it takes.
    public func wait<Result, Failure: Error>(
        until ready: (State) -> Bool, timeout: Double? = nil, _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if let timeout {
            var deadline = Self.monotonicNow(plus: timeout)
            while !ready(state) {
                if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
            }
        } else {
            while !ready(state) { pthread_cond_wait(condition, mutex) }
        }
        return try body(&state)
    }

    /// The monotonic clock `seconds` from now (clamped to 0…10 years), as `pthread_cond_timedwait` takes it.
    private static func monotonicNow(plus seconds: Double) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let wait = seconds.isNaN ? 0 : min(max(seconds, 0), 315_360_000)
        let whole = wait.rounded(.down)
        var nanoseconds = Int(now.tv_nsec) + Int((wait - whole) * 1e9)
        var total = Int(now.tv_sec) + Int(whole)
        if nanoseconds >= 1_000_000_000 {
            nanoseconds -= 1_000_000_000
            total += 1
        }
        return timespec(tv_sec: total, tv_nsec: nanoseconds)
    }
}
