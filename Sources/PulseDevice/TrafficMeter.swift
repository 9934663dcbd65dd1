import Synchronization

/// Requests sent and body bytes received, for "what did this cost": every exchange of a `SyncClient`
/// counts (manifests, blobs, keys, the time, retries).
public final class TrafficMeter: Sendable {
    public struct Reading: Sendable, Equatable {
        public var requests = 0
        public var bytes = 0

        public init(requests: Int = 0, bytes: Int = 0) {
            self.requests = requests
            self.bytes = bytes
        }

        public static func - (lhs: Reading, rhs: Reading) -> Reading {
            Reading(requests: lhs.requests - rhs.requests, bytes: lhs.bytes - rhs.bytes)
        }
    }

    private let value = Mutex(Reading())

    public init() {}

    public var reading: Reading { value.withLock { $0 } }

    func request() { value.withLock { $0.requests += 1 } }
    func received(_ count: Int) { value.withLock { $0.bytes += count } }
}
