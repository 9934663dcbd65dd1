import CMicroHTTPD
import Foundation
import PulseSystem
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: keep-alive, one epoll loop per thread in a pool, every request
/// answered by a Swift `HTTPResponder`. Owns the `MHD_Daemon`; `shutdown` (or `deinit`) stops it.
///
/// Before a responder sees a request, the server checks its head (RFC 9112: see `RequestHead`) and answers
/// 400 and closes on anything ambiguous; refuses bodies beyond `maxRequestBodyBytes` (413); bounds the time a
/// request may take to arrive; and at the connection limits makes room or answers the newcomer's request 503
/// (`ConnectionTracker`).
/// Answers can be immediate, prepared once (`SharedResponse`), deferred to another thread
/// (`HTTPDeferredResponse`) or open-ended streams (`HTTPEventStream`); the last two suspend the connection
/// instead of holding a thread.
// @unchecked: owns the MHD_Daemon; it and the listen socket change only in `shutdown`, once (`stopped`).
public final class HTTPServer: @unchecked Sendable {
    /// The port listened on (the real one when the configuration asked for port 0).
    public let port: UInt16
    /// The address listened on as `host:port`, as the kernel bound it: `--listen :8080` gives `0.0.0.0:8080`,
    /// port 0 the port it picked. What a start-up line should print.
    public let boundAddress: String
    public let configuration: Configuration
    let responder: any HTTPResponder
    let tracker: ConnectionTracker
    let errors: ServerResponses
    /// The headers collected for the responder.
    let wantedHeaders: [WantedHeader]
    let inFlight = Atomic<Int>(0)
    private let stopped = Mutex(false)
    // Set once in init, then only read; libmicrohttpd is thread-safe for the calls made on it.
    private var daemon: OpaquePointer?
    private var listenDescriptor: Int32

    /// Listens and starts serving at once.
    /// - Throws: `HTTPServerError` when the address is bad, in use or not permitted, or libmicrohttpd fails.
    public init(configuration: Configuration, responder: any HTTPResponder) throws(HTTPServerError) {
        DescriptorLimit.raiseToHard()
        let socket = try ListenSocket.open(configuration.listen, backlog: configuration.listenBacklog)
        self.port = socket.port
        self.boundAddress = socket.boundAddress
        self.listenDescriptor = socket.descriptor
        self.configuration = configuration
        self.responder = responder
        self.daemon = nil
        self.wantedHeaders = configuration.requestHeaders.map(WantedHeader.init)
        self.errors = ServerResponses()
        // libmicrohttpd stops accepting at its own limit (new clients then wait in the kernel queue): give it
        // headroom, and admit or refuse at `maxConnections` in the connection callback. Refused connections waiting
        // for their request may take half of it.
        let threads = max(1, configuration.threads)
        let headroom = Self.headroom(maxConnections: configuration.maxConnections, threads: threads)
        let second: UInt64 = 1_000_000_000
        self.tracker = ConnectionTracker(limits: .init(
            maxConnections: max(1, configuration.maxConnections),
            maxPerAddress: max(0, configuration.maxConnectionsPerIP),
            headerTimeout: UInt64(max(1, configuration.headerTimeoutSeconds)) * second,
            idleTimeout: UInt64(max(1, configuration.idleTimeoutSeconds)) * second,
            heartbeat: UInt64(max(0, configuration.streamHeartbeatSeconds)) * second,
            maxWaitingRefusals: headroom / 2,
            sweepInterval: configuration.sweepInterval))

        let pollFlags: UInt32 = MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue
        let flags: UInt32 = pollFlags | MHD_USE_ITC.rawValue | MHD_USE_TURBO.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
        let me = Unmanaged.passUnretained(self).toOpaque()
        func option(_ option: MHD_OPTION) -> CInt { CInt(bitPattern: option.rawValue) }
        let uriLog = OpaquePointer(unsafeBitCast(uriLogCallback, to: UnsafeRawPointer.self))
        let completed = OpaquePointer(unsafeBitCast(completedCallback, to: UnsafeRawPointer.self))
        let connections = OpaquePointer(unsafeBitCast(connectionCallback, to: UnsafeRawPointer.self))
        let cls = OpaquePointer(me)
        // No PER_IP_CONNECTION_LIMIT: libmicrohttpd closes a connection over it right after accepting, without a
        // word; the tracker answers its request 503 instead.
        var arguments: [any CVarArg] = [
            option(.LISTEN_SOCKET), CInt(socket.descriptor),
            option(.CONNECTION_LIMIT), CUnsignedInt(max(1, configuration.maxConnections) + headroom),
            option(.CONNECTION_TIMEOUT), CUnsignedInt(configuration.idleTimeoutSeconds),
            option(.CONNECTION_MEMORY_LIMIT), Int(configuration.connectionMemoryBytes),
            option(.URI_LOG_CALLBACK), uriLog, cls,
            option(.NOTIFY_COMPLETED), completed, cls,
            option(.NOTIFY_CONNECTION), connections, cls,
        ]
        if threads > 1 {
            arguments += [option(.THREAD_POOL_SIZE), CUnsignedInt(threads)]
        }
        arguments.append(option(.END))
        let started = withVaList(arguments) { list in
            MHD_start_daemon_va(flags, 0, nil, nil, accessHandler, me, list)
        }
        guard let started else {
            close(socket.descriptor)
            throw .daemonFailed("MHD_start_daemon failed (threads, memory or epoll unavailable)")
        }
        daemon = started
        tracker.startSweeping()
    }

    deinit { stop() }

    /// Requests being answered right now (from the request line to the end of sending; open streams count).
    public var requestsInFlight: Int { inFlight.load(ordering: .relaxed) }

    /// Connections open now (admitted ones).
    public var openConnections: Int { tracker.openConnections }

    /// Event streams open now.
    public var openStreams: Int { tracker.openStreams }

    /// Connections closed so far because their request did not arrive within `headerTimeoutSeconds`, closed to
    /// make room at `maxConnections`, refused at either limit (their request answered 503), of those refused at
    /// `maxConnectionsPerIP`, and of those refused written their 503 unasked (no request within a second) (for
    /// metrics and logs).
    public var connectionsCut: (byDeadline: Int, toMakeRoom: Int, refused: Int, refusedForAddress: Int, refusedAnsweredUnasked: Int) {
        (tracker.closedByDeadline.load(ordering: .relaxed), tracker.closedToMakeRoom.load(ordering: .relaxed),
         tracker.refused.load(ordering: .relaxed), tracker.refusedForAddress.load(ordering: .relaxed),
         tracker.refusalsAnsweredUnasked.load(ordering: .relaxed))
    }

    /// Graceful stop: no new connections; event streams end cleanly (what was sent, then the end of the
    /// body); requests in flight (their request line arrived) finish, their bodies read and their answers sent,
    /// deferred ones too (up to `drainSeconds`; deferred answers still missing then get 503); then every
    /// connection is closed.
    public func shutdown(drainSeconds: Double = 10) {
        guard let daemon, !stopped.withLock({ $0 }) else { return }
        let quiesced = MHD_quiesce_daemon(daemon)
        if quiesced >= 0 { close(quiesced); listenDescriptor = -1 }
        tracker.stopStreams()
        let deadline = Date().addingTimeInterval(drainSeconds)
        // A keep-alive connection may start one more request right after a response: wait for a quiet moment.
        var quietSince: Date?
        while Date() < deadline {
            if requestsInFlight == 0 {
                if let quietSince, Date().timeIntervalSince(quietSince) > 0.1 { break }
                quietSince = quietSince ?? Date()
            } else {
                quietSince = nil
            }
            usleep(10_000)
        }
        stop()
    }

    /// Immediate stop: ends streams, answers waiting deferred requests with 503, closes every connection.
    public func stop() {
        let already = stopped.withLock { value in
            defer { value = true }
            return value
        }
        guard !already, let daemon else { return }
        tracker.stopSweeping()
        // libmicrohttpd refuses to stop with suspended connections: resume every one first, and give the
        // resumed ones a moment to send their last bytes (the end of a stream, a 503).
        tracker.stopStreams()
        if tracker.abandonDeferred(with: HTTPResponse(errors.unavailable, note: "stopping")) > 0 || tracker.openStreams > 0 {
            let deadline = Date().addingTimeInterval(1)
            while requestsInFlight > 0 && Date() < deadline { usleep(5_000) }
        }
        // libmicrohttpd closes the listen socket it was given, unless quiesce handed it back (closed above).
        MHD_stop_daemon(daemon)
        listenDescriptor = -1
    }
}

/// Monotonic nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
