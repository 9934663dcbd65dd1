import Foundation

extension HTTPServer {
    /// Listening address, threads and the limits against abuse. The defaults are documented in docs/origin.md.
    public struct Configuration: Sendable {
        /// `host:port`; port 0 picks a free port (see `HTTPServer.port`).
        public var listen: String = "127.0.0.1:8080"
        /// Threads, each with its own epoll loop, that read requests, call the responder and send answers.
        /// Default: one per core. A responder may block briefly (a SQLite query under a millisecond, one
        /// round trip to a database on the same network): that holds one thread and every connection it serves
        /// for that long, so size the pool for it (e.g. 4 × cores) and hand anything slower to other threads
        /// with `HTTPDeferredResponse`.
        public var threads: Int = max(1, ProcessInfo.processInfo.activeProcessorCount)
        /// Open connections at most (event streams included). At the limit, a new connection closes the one
        /// that has waited longest (at least a second) for a request, or else is refused: its request is answered
        /// `503` with `Retry-After: 1` and `Connection: close` (one that sends none within a second is closed; when
        /// half the headroom libmicrohttpd is given, `max(64 × threads, maxConnections / 8)` connections, waits like
        /// that already, the 503 is written at once, before the request).
        /// Each connection costs `connectionMemoryBytes` plus about 1 KB, and a descriptor (the soft
        /// RLIMIT_NOFILE is raised to the hard limit at start).
        public var maxConnections: Int = 1024
        /// Open connections per client IP at most (0: no limit); a connection beyond it is refused as at
        /// `maxConnections` (its request answered `503`, `Retry-After: 1`, `Connection: close`). Behind a CDN all
        /// traffic comes from a few addresses, so raise it there.
        public var maxConnectionsPerIP: Int = 64
        /// Seconds a connection may stay silent (idle keep-alive, or a client reading or sending too slowly)
        /// before it is closed.
        public var idleTimeoutSeconds: Int = 15
        /// Seconds a request's line, headers and body may take in all, however steadily they trickle in: from
        /// the connection opening, or for the next request on a kept-alive connection from the end of its idle
        /// time (`idleTimeoutSeconds`) after the previous response.
        public var headerTimeoutSeconds: Int = 10
        /// Memory per connection for the request line and headers (and the response headers); a request whose
        /// line and headers do not fit (about 7 KB of headers with the default 8 KB, like nginx's default
        /// 8 KB header buffers) is refused with 431 (414 when the request line is the bulk of it).
        /// libmicrohttpd clears it per request, so smaller is faster.
        public var connectionMemoryBytes: Int = 8 * 1024
        /// Request body bytes accepted at most. 0 (the default) refuses every body: a request announcing
        /// one gets 413 and the connection is closed. Above 0, a Content-Length over the maximum gets 413 without
        /// the body being read, and a chunked body is collected up to the maximum (beyond it: 413 and close,
        /// see `HTTPRequest.body`).
        public var maxRequestBodyBytes: Int = 0
        /// Seconds of silence after which an event stream gets its heartbeat (0: never), so that a client that
        /// went away is noticed (a write fails) and the stream's `onEnd` runs.
        public var streamHeartbeatSeconds: Int = 15
        /// listen(2) backlog.
        public var listenBacklog: Int = 511
        /// Request headers collected for the responder (lowercase names), every line of each; others are only
        /// checked, not copied.
        public var requestHeaders: [String] = []
        /// Seconds between two checks of the request deadlines and stream heartbeats (tests run it faster).
        var sweepInterval = 0.25

        public init() {}
    }
}
