import CMicroHTTPD
import Foundation
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: keep-alive, one epoll loop per thread in a pool, every request
/// answered by a Swift `HTTPResponder`. Owns the `MHD_Daemon`; `shutdown` (or `deinit`) stops it.
public final class HTTPServer: @unchecked Sendable {
    /// The port listened on (the real one when the configuration asked for port 0).
    public let port: UInt16
    public let configuration: Configuration
    let responder: any HTTPResponder
    let inFlight = Atomic<Int>(0)
    private let stopped = Mutex(false)
    // Set once in init, then only read; libmicrohttpd is thread-safe for the calls made on it.
    private var daemon: OpaquePointer?
    private var listenDescriptor: Int32

    /// Listens and starts serving at once.
    /// - Throws: `HTTPServerError` when the address is bad, in use or not permitted, or libmicrohttpd fails.
    public init(configuration: Configuration, responder: any HTTPResponder) throws(HTTPServerError) {
        Self.raiseDescriptorLimit()
        let socket = try ListenSocket.open(configuration.listen, backlog: configuration.listenBacklog)
        self.port = socket.port
        self.listenDescriptor = socket.descriptor
        self.configuration = configuration
        self.responder = responder
        self.daemon = nil

        let pollFlags: UInt32 = MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue
        let flags: UInt32 = pollFlags | MHD_USE_ITC.rawValue | MHD_USE_TURBO.rawValue
        let me = Unmanaged.passUnretained(self).toOpaque()
        func option(_ option: MHD_OPTION) -> CInt { CInt(bitPattern: option.rawValue) }
        let uriLog = OpaquePointer(unsafeBitCast(uriLogCallback, to: UnsafeRawPointer.self))
        let completed = OpaquePointer(unsafeBitCast(completedCallback, to: UnsafeRawPointer.self))
        let connections = OpaquePointer(unsafeBitCast(connectionCallback, to: UnsafeRawPointer.self))
        let cls = OpaquePointer(me)
        var arguments: [any CVarArg] = [
            option(.LISTEN_SOCKET), CInt(socket.descriptor),
            option(.CONNECTION_LIMIT), CUnsignedInt(configuration.maxConnections),
            option(.PER_IP_CONNECTION_LIMIT), CUnsignedInt(configuration.maxConnectionsPerIP),
            option(.CONNECTION_TIMEOUT), CUnsignedInt(configuration.idleTimeoutSeconds),
            option(.CONNECTION_MEMORY_LIMIT), Int(configuration.connectionMemoryBytes),
            option(.URI_LOG_CALLBACK), uriLog, cls,
            option(.NOTIFY_COMPLETED), completed, cls,
            option(.NOTIFY_CONNECTION), connections, cls,
        ]
        if configuration.threads > 1 {
            arguments += [option(.THREAD_POOL_SIZE), CUnsignedInt(configuration.threads)]
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
    }

    deinit { stop() }

    /// Requests being answered right now (from the request line to the end of sending).
    public var requestsInFlight: Int { inFlight.load(ordering: .relaxed) }

    /// Graceful stop: no new connections, requests in flight finish sending (up to `drainSeconds`), then
    /// every connection is closed.
    public func shutdown(drainSeconds: Double = 10) {
        guard let daemon, !stopped.withLock({ $0 }) else { return }
        let quiesced = MHD_quiesce_daemon(daemon)
        if quiesced >= 0 { close(quiesced); listenDescriptor = -1 }
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

    /// Immediate stop: closes every connection.
    public func stop() {
        let already = stopped.withLock { value in
            defer { value = true }
            return value
        }
        guard !already, let daemon else { return }
        // libmicrohttpd closes the listen socket it was given, unless quiesce handed it back (closed above).
        MHD_stop_daemon(daemon)
        listenDescriptor = -1
    }

    /// Many connections need many descriptors: lift the soft limit to the hard one.
    private static func raiseDescriptorLimit() {
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }
}

/// Per-request state, from the request line (URI log callback) to the completion callback. One is made per
/// connection and reused by its requests (libmicrohttpd handles a connection's requests one after another),
/// so the hot path allocates nothing for it; a second one is made only if that ever overlapped.
final class RequestContext {
    /// The client's address as text, formatted once per connection.
    var client: [UInt8] = [0x2d]
    var inUse = false
    var target: [UInt8] = []
    var start: UInt64 = 0
    var method: HTTPMethod = .get
    var methodText = ""
    var headersSeen = false
    var responded = false
    var status = 0
    var bodyBytes = 0
    var note = "-"

    /// Starts a request: keeps the raw target (reusing the buffer of the previous request).
    func begin(target uri: UnsafePointer<CChar>?, start: UInt64) {
        inUse = true
        target.removeAll(keepingCapacity: true)
        if let uri { target.append(contentsOf: UnsafeRawBufferPointer(start: uri, count: strlen(uri))) }
        self.start = start
        method = .get
        methodText = ""
        headersSeen = false
        responded = false
        status = 0
        bodyBytes = 0
        note = "-"
    }
}

/// Monotonic nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
