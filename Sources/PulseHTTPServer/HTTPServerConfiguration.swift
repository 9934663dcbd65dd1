import Foundation

extension HTTPServer {
    /// Listening address, threads and the limits against abuse. The defaults are documented in docs/origin.md.
    public struct Configuration: Sendable {
        /// `host:port`; port 0 picks a free port (see `HTTPServer.port`).
        public var listen: String = "127.0.0.1:8080"
        /// Threads, each with its own epoll loop. Default: one per core.
        public var threads: Int = max(1, ProcessInfo.processInfo.activeProcessorCount)
        /// Open connections at most; further ones are accepted and closed at once.
        public var maxConnections: Int = 1024
        /// Open connections per client IP at most (0: no limit). Behind a CDN all traffic comes from a
        /// few addresses, so raise it there.
        public var maxConnectionsPerIP: Int = 64
        /// Seconds a connection may stay silent (idle keep-alive, or a client sending too slowly) before it is closed.
        public var idleTimeoutSeconds: Int = 15
        /// Memory per connection for the request line and headers (and the response headers); a request whose
        /// line and headers do not fit (about 7 KB of headers with the default 8 KB, like nginx's default
        /// 8 KB header buffers) is refused with 431. libmicrohttpd clears it per request, so smaller is faster.
        public var connectionMemoryBytes: Int = 8 * 1024
        /// listen(2) backlog.
        public var listenBacklog: Int = 511
        /// Request headers collected for the responder (lowercase names); others are not read.
        public var requestHeaders: [String] = []

        public init() {}
    }
}
