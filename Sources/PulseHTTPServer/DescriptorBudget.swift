import PulseSystem

extension HTTPServer {
    /// How many connections the open-files limit (`RLIMIT_NOFILE`) leaves room for, once the descriptors the
    /// process needs for everything else (`reserve`: standard streams, logs, database files, a metrics
    /// listener) are set aside. Both servers check `--max-connections` against it before they listen.
    public struct DescriptorBudget: Sendable, Equatable {
        /// Descriptors every server process keeps apart from its connections and the files it names in
        /// `reserve`: standard streams, the access log, the lock and key files, `/proc` reads, a DNS lookup.
        public static let baseReserve = 64

        /// The soft open-files limit in force (`Int.max`: none).
        public let limit: Int
        /// Descriptors kept for what is not a connection.
        public let reserve: Int
        /// Server threads: each has an epoll descriptor and a wake-up pipe, and sets the headroom's floor.
        public let threads: Int

        public init(limit: Int, reserve: Int, threads: Int) {
            self.limit = max(0, limit)
            self.reserve = max(0, reserve)
            self.threads = max(1, threads)
        }

        /// Raises the soft limit to the hard one (`DescriptorLimit.raiseToHard`) and returns the budget under
        /// it; nil when the limit cannot be read (no check is made then).
        public static func raised(reserve: Int, threads: Int) -> DescriptorBudget? {
            DescriptorLimit.raiseToHard().map { DescriptorBudget(limit: $0, reserve: reserve, threads: threads) }
        }

        /// Descriptors a server with `maxConnections` and `threads` holds at most: the connections, the headroom
        /// libmicrohttpd accepts above them (`HTTPServer.headroom`, where refused ones wait for their 503), an
        /// epoll descriptor and a wake-up pipe per thread, and the listen socket.
        public static func needed(maxConnections: Int, threads: Int) -> Int {
            let threads = max(1, threads)
            let connections = max(1, maxConnections)
            // Both at most 1,000,000 from the command line; saturating all the same.
            let (sum, overflow) = connections.addingReportingOverflow(HTTPServer.headroom(maxConnections: connections, threads: threads) + 3 * threads + 1)
            return overflow ? Int.max : sum
        }

        /// The largest `--max-connections` that fits: `needed(maxConnections:threads:) + reserve ≤ limit`
        /// (0 when not even one does; `Int.max` when there is no limit).
        public var allowedConnections: Int {
            guard limit != Int.max else { return Int.max }
            let available = limit - reserve
            guard available > 0, Self.needed(maxConnections: 1, threads: threads) <= available else { return 0 }
            // `needed` grows with its argument: the largest one that fits, by bisection.
            var low = 1, high = available
            while low < high {
                let middle = low + (high - low + 1) / 2
                if Self.needed(maxConnections: middle, threads: threads) <= available { low = middle } else { high = middle - 1 }
            }
            return low
        }

        /// The open-files limit `maxConnections` needs, reserve included.
        public func limitNeeded(maxConnections: Int) -> Int {
            let (sum, overflow) = Self.needed(maxConnections: maxConnections, threads: threads).addingReportingOverflow(reserve)
            return overflow ? Int.max : sum
        }

        /// Throws `HTTPServerError.tooFewDescriptors` when `maxConnections` does not fit under the limit.
        public func check(maxConnections: Int) throws(HTTPServerError) {
            guard maxConnections > allowedConnections else { return }
            throw .tooFewDescriptors(
                maxConnections: maxConnections, allowed: allowedConnections, limit: limit, needed: limitNeeded(maxConnections: maxConnections))
        }

        /// The `--max-connections` to serve with: one given on the command line must fit (else
        /// `tooFewDescriptors`); the default is lowered to what fits (at least 1), so a server started without the
        /// option still starts under a small limit, and says so on its start line (`summary`).
        public func fit(maxConnections: Int, given: Bool) throws(HTTPServerError) -> Int {
            if given { try check(maxConnections: maxConnections) }
            return min(maxConnections, max(1, allowedConnections))
        }

        /// What a start line says: `20000 connections at most (the open-files limit 65536 allows 57892)`, and
        /// when the default was lowered to fit, `17688 connections at most (the default 20000 lowered to what the
        /// open-files limit 20000 allows)`.
        public func summary(maxConnections: Int, lowered from: Int? = nil) -> String {
            if let from, from != maxConnections {
                return "\(maxConnections) connections at most (the default \(from) lowered to what the open-files limit \(limit) allows)"
            }
            let allows = limit == Int.max ? "no open-files limit" : "the open-files limit \(limit) allows \(allowedConnections)"
            return "\(maxConnections) connections at most (\(allows))"
        }
    }

    /// Connections libmicrohttpd accepts above `maxConnections` (those refused wait there for their 503).
    static func headroom(maxConnections: Int, threads: Int) -> Int {
        max(64 * max(1, threads), max(1, maxConnections) / 8)
    }
}
