import Foundation
import Synchronization

/// Every open connection and what it is doing, for what libmicrohttpd 0.9.75 does not do itself:
///
/// - **Admission.** At `maxConnections`, libmicrohttpd stops accepting and new clients wait in the kernel's
///   queue until a slot frees (15 s with idle connections). Instead it is given headroom and each new
///   connection is admitted here: at the limit, the connection that has waited longest for a request (idle
///   keep-alive, or trickling its headers) and for at least a second is closed to make room; when there is
///   none, the newcomer is refused. So is a connection from an address that has `maxPerAddress` open already
///   (libmicrohttpd's own per-address limit closes the connection without a word, which a client cannot tell
///   from a crash). A refused connection's request is answered `503` with `Retry-After` and
///   `Connection: close`; one that sends no request within `refusalTimeout` is written that 503 unasked and
///   its sending side shut (it is closed at the header deadline if the client has not closed it by then), and
///   when `maxWaitingRefusals` refused connections wait already, the newcomer gets the 503 at once.
/// - **Request deadline.** libmicrohttpd's timeout restarts with every byte, so a client sending one header byte
///   a second keeps its slot forever. A request's line, headers and body must arrive within `headerTimeout`
///   of the connection opening, or of the end of its previous response plus the idle timeout.
/// - **Heartbeats** for event streams, and closing streams and deferred answers when the server stops.
///
/// Closing from here is `shutdown(2)` on the socket: libmicrohttpd then reads end-of-file and closes the
/// connection on its own thread. The descriptor is used only under the tracker's lock, and libmicrohttpd reports a
/// connection closed (which takes that lock) before it closes the descriptor, so it is never a reused number.
/// Connection phases are stamped by the server threads without the lock, so one may be stamped after the
/// moment a sweep or an admission took as "now": such a phase is zero seconds old, never 2^64 ns.
final class ConnectionTracker: Sendable {
    struct Limits {
        var maxConnections: Int
        /// Admitted connections per client address at most (0: no limit).
        var maxPerAddress: Int = 0
        var headerTimeout: UInt64
        var idleTimeout: UInt64
        var heartbeat: UInt64
        /// A waiting connection younger than this is never closed to make room.
        var minimumAge: UInt64 = 1_000_000_000
        /// A refused connection whose request has not come within this is closed without an answer.
        var refusalTimeout: UInt64 = 1_000_000_000
        /// Refused connections waiting for their request at most (each holds one of libmicrohttpd's slots).
        var maxWaitingRefusals: Int = 64
        /// Seconds between two checks of deadlines and heartbeats.
        var sweepInterval = 0.25
    }

    /// What becomes of a new connection.
    enum Admission: Equatable {
        case admitted
        /// Its request will be answered 503 (`RequestContext.refusal` says why), then it is closed.
        case refusedOnRequest
        /// Too many refused connections wait already: the caller writes the 503 at once and closes.
        case refusedAtOnce
    }

    /// The connections, and the fields of each `RequestContext` that say "guarded by the tracker's lock".
    private struct State {
        var connections: [RequestContext] = []
        var admitted = 0
        var perAddress: [HTTPClientAddress: Int] = [:]
        var waitingRefusals = 0
        var streams: [ObjectIdentifier: HTTPEventStream] = [:]
        var deferreds: [ObjectIdentifier: HTTPDeferredResponse] = [:]
        /// Set by a graceful stop (`HTTPServer.shutdown`): streams end and new ones are refused.
        var streamsStopped = false
        /// Set by the final stop (`HTTPServer.stop`): deferred answers still missing get the fallback, new ones
        /// are refused. Not by a graceful stop: a request in flight then (its body still arriving, its write
        /// queued) may still defer its answer and be answered within the drain.
        var deferredsRefused = false
        var sweeping = false
    }

    let limits: Limits
    private let state = Mutex(State())
    private let sweepStop = DispatchSemaphore(value: 0)
    /// Counters for tests and logs.
    let closedByDeadline = Atomic<Int>(0)
    let closedToMakeRoom = Atomic<Int>(0)
    let refused = Atomic<Int>(0)
    let refusedForAddress = Atomic<Int>(0)
    /// Refused connections written their 503 unasked at `refusalTimeout`.
    let refusalsAnsweredUnasked = Atomic<Int>(0)

    init(limits: Limits) {
        self.limits = limits
    }

    /// Connections open and admitted now.
    var openConnections: Int { state.withLock { $0.admitted } }

    /// Streams open now.
    var openStreams: Int { state.withLock { $0.streams.count } }

    // MARK: Connections (libmicrohttpd threads)

    /// A connection opened on socket `fd` (its `address` set): admitted, or refused (see `Admission`).
    func opened(_ context: RequestContext, fd: Int32, now: UInt64) -> Admission {
        context.phase.store(ConnectionPhase.fresh(since: now), ordering: .relaxed)
        return state.withLock { state in
            context.fd = fd
            context.trackerIndex = state.connections.count
            state.connections.append(context)
            let address = limits.maxPerAddress > 0 ? context.address : nil
            if let address, state.perAddress[address, default: 0] >= limits.maxPerAddress {
                return refuse(context, .addressLimit, &state)
            }
            if state.admitted >= limits.maxConnections && !makeRoom(now: now, &state) {
                return refuse(context, .connectionLimit, &state)
            }
            state.admitted += 1
            if let address { state.perAddress[address, default: 0] += 1 }
            return .admitted
        }
    }

    /// With the state locked.
    private func refuse(_ context: RequestContext, _ refusal: ConnectionRefusal, _ state: inout State) -> Admission {
        context.refusal = refusal
        refused.add(1, ordering: .relaxed)
        if refusal == .addressLimit { refusedForAddress.add(1, ordering: .relaxed) }
        if state.waitingRefusals >= limits.maxWaitingRefusals {
            context.closing = true
            return .refusedAtOnce
        }
        context.waitsAsRefused = true
        state.waitingRefusals += 1
        return .refusedOnRequest
    }

    /// The request line of a refused connection has come (the URI log callback, on the connection's thread): its
    /// 503 is the request's from now on, so the sweep never writes one unasked that could race it.
    func refusedRequestStarted(_ context: RequestContext) {
        state.withLock { _ in context.refusedRequestStarted = true }
    }

    /// The connection is closing: forget it before libmicrohttpd closes its descriptor.
    func closed(_ context: RequestContext) {
        state.withLock { state in
            let index = context.trackerIndex
            guard index >= 0, index < state.connections.count, state.connections[index] === context else { return }
            let last = state.connections.removeLast()
            if index < state.connections.count {
                state.connections[index] = last
                last.trackerIndex = index
            }
            context.trackerIndex = -1
            context.fd = -1
            if context.waitsAsRefused {
                context.waitsAsRefused = false
                state.waitingRefusals -= 1
            }
            guard context.refusal == nil else { return }
            state.admitted -= 1
            if limits.maxPerAddress > 0, let address = context.address, let count = state.perAddress[address] {
                state.perAddress[address] = count > 1 ? count - 1 : nil
            }
        }
    }

    /// Closes the connection that has waited longest for a request (at least `minimumAge`). With the state locked.
    private func makeRoom(now: UInt64, _ state: inout State) -> Bool {
        var victim: RequestContext?
        var oldest = UInt64.max
        for context in state.connections where context.fd >= 0 && !context.closing && context.refusal == nil {
            let phase = context.phase.load(ordering: .relaxed)
            guard ConnectionPhase.isWaiting(phase) else { continue }
            let since = ConnectionPhase.since(phase)
            if since < oldest { oldest = since; victim = context }
        }
        guard let victim, ConnectionPhase.age(since: oldest, now: now) >= limits.minimumAge else { return false }
        close(victim)
        closedToMakeRoom.add(1, ordering: .relaxed)
        return true
    }

    /// Shuts the connection's socket down. With the state locked.
    private func close(_ context: RequestContext) {
        context.closing = true
        shutdown(context.fd, Int32(SHUT_RDWR))
    }

    /// A refused connection whose request has not come within `refusalTimeout` (a client slowed down, or a server
    /// too busy to read it yet): its 503 is written unasked, then the socket's sending side is shut. The client
    /// reads an answer it can act on and the end of the stream, where closing the socket would have left it
    /// nothing (or a reset, its request on its way): under `wrk -c1000` from one address on a loaded machine that
    /// was 9 to 243 read errors in some 10 s runs. libmicrohttpd goes on reading, so a request that comes after is
    /// read (closing then sends no reset) and its own 503 fails to be written, which ends the connection; a client
    /// that keeps it open is closed at the header deadline. With the state locked.
    private func answerRefusal(_ context: RequestContext) {
        context.refusalAnswered = true
        ServerResponses.write(ServerResponses.busy(context.refusal), to: context.fd)
        shutdown(context.fd, Int32(SHUT_WR))
        refusalsAnsweredUnasked.add(1, ordering: .relaxed)
    }

    // MARK: Streams and deferred answers

    /// Records a stream being sent; false when the server is stopping (the stream is stopped at once).
    func track(_ stream: HTTPEventStream) -> Bool {
        let accepted = state.withLock { state in
            if !state.streamsStopped { state.streams[ObjectIdentifier(stream)] = stream }
            return !state.streamsStopped
        }
        if !accepted { stream.stop() }
        return accepted
    }

    func forget(_ stream: HTTPEventStream) {
        _ = state.withLock { $0.streams.removeValue(forKey: ObjectIdentifier(stream)) }
    }

    /// Records a deferred answer awaited; false once the server stops for good (`abandonDeferred`), but not
    /// while a graceful stop drains.
    func track(_ deferred: HTTPDeferredResponse) -> Bool {
        state.withLock { state in
            if !state.deferredsRefused { state.deferreds[ObjectIdentifier(deferred)] = deferred }
            return !state.deferredsRefused
        }
    }

    func forget(_ deferred: HTTPDeferredResponse) {
        _ = state.withLock { $0.deferreds.removeValue(forKey: ObjectIdentifier(deferred)) }
    }

    /// Ends every stream cleanly (they finish what was sent, then the final chunk); new streams are refused.
    func stopStreams() {
        let open: [HTTPEventStream] = state.withLock { state in
            state.streamsStopped = true
            return Array(state.streams.values)
        }
        for stream in open { stream.stop() }
    }

    /// Answers every deferred request still waiting with `fallback` (before libmicrohttpd stops, which it
    /// refuses to do with connections suspended); returns how many there were.
    @discardableResult
    func abandonDeferred(with fallback: HTTPResponse) -> Int {
        let waiting: [HTTPDeferredResponse] = state.withLock { state in
            state.streamsStopped = true
            state.deferredsRefused = true
            return Array(state.deferreds.values)
        }
        for deferred in waiting { deferred.abandon(with: fallback) }
        return waiting.count
    }

    // MARK: The sweeper thread

    func startSweeping() {
        let thread = Thread { [weak self] in
            while let tracker = self {
                tracker.sweep(now: monotonicNanoseconds())
                if tracker.sweepStop.wait(timeout: .now() + tracker.limits.sweepInterval) == .success { return }
            }
        }
        thread.name = "http-sweeper"
        state.withLock { $0.sweeping = true }
        thread.start()
    }

    func stopSweeping() {
        if state.withLock({ $0.sweeping }) { sweepStop.signal() }
    }

    /// Closes connections past their request deadline and writes heartbeats to silent streams.
    func sweep(now: UInt64) {
        let silent: [HTTPEventStream] = state.withLock { state in
            for context in state.connections where context.fd >= 0 && !context.closing {
                let phase = context.phase.load(ordering: .relaxed)
                let allowed: UInt64
                // A refused connection waits `refusalTimeout` for its request, then is answered unasked; from then
                // on, or once its request has started, it has the header deadline like any other.
                let answersUnasked = context.refusal != nil && !context.refusedRequestStarted && !context.refusalAnswered
                switch ConnectionPhase.kind(phase) {
                case ConnectionPhase.freshKind: allowed = answersUnasked ? limits.refusalTimeout : limits.headerTimeout
                case ConnectionPhase.keepAliveKind: allowed = limits.idleTimeout + limits.headerTimeout
                default: continue
                }
                if ConnectionPhase.age(since: ConnectionPhase.since(phase), now: now) > allowed {
                    if answersUnasked {
                        answerRefusal(context)
                        continue
                    }
                    close(context)
                    if context.refusal == nil { closedByDeadline.add(1, ordering: .relaxed) }
                }
            }
            return limits.heartbeat > 0 ? Array(state.streams.values) : []
        }
        for stream in silent { stream.heartbeatIfSilent(now: now, interval: limits.heartbeat) }
    }
}

/// What a connection is doing, packed in one word so the hot path updates it with one relaxed store:
/// the kind in the low two bits, the monotonic nanoseconds when it started in the others (low two bits dropped).
enum ConnectionPhase {
    static let freshKind: UInt64 = 0
    static let keepAliveKind: UInt64 = 1
    static let busyKind: UInt64 = 2

    /// Opened, no request yet.
    static func fresh(since now: UInt64) -> UInt64 { now & ~3 | freshKind }
    /// Between requests on a kept-alive connection.
    static func keepAlive(since now: UInt64) -> UInt64 { now & ~3 | keepAliveKind }
    /// A request is being answered (or streamed): never closed by the sweeper or to make room.
    static let busy: UInt64 = busyKind

    static func kind(_ phase: UInt64) -> UInt64 { phase & 3 }
    static func since(_ phase: UInt64) -> UInt64 { phase & ~3 }
    static func isWaiting(_ phase: UInt64) -> Bool { phase & 3 < busyKind }
    /// Nanoseconds from `since` to `now`; 0 when a server thread stamped the phase after `now` was read (a plain
    /// `now - since` would then be about 2^64 and close a connection that has just been answered).
    static func age(since: UInt64, now: UInt64) -> UInt64 { now > since ? now - since : 0 }
}

/// Why a connection was refused (what its 503 says, and the access log note).
enum ConnectionRefusal {
    /// `maxConnections` open, none of them waiting long enough to be closed for the newcomer.
    case connectionLimit
    /// `maxConnectionsPerIP` open from the same address.
    case addressLimit
}
