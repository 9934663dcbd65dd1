import Foundation

/// The sync server's rules that an operator may tune; the defaults are the decisions of docs/server.md.
public struct SyncConfiguration: Sendable {
    /// Networks whose `X-Forwarded-For` is believed (`--trusted-proxy`), for the venue rule and the
    /// enrollment rate limit.
    public var trustedProxies: [IPNetwork] = []
    /// A signed request's timestamp may be this many seconds away from the server's clock.
    public var signatureWindow: Int64 = 300
    /// A signed POST's signature is remembered this long (longer than the window on both sides).
    public var replayWindow: Int64 = 600
    /// Per device, on every device-scoped route: about 5 calls a second, bursts of 10.
    public var deviceLimit = RateLimit(rate: 5, burst: 10)
    /// Per client address on `POST /api/sync/enroll` (a venue's NAT puts many phones behind one address).
    public var enrollLimit = RateLimit(rate: 5, burst: 50)
    /// Request bodies at most (diag samples, enrollments, staff calls): 413 beyond.
    public var maxBodyBytes = 16 * 1024
    /// The moderator's live view shows devices with a sample this recent.
    public var liveWindow: Int64 = 60
    /// How often the event hub asks storage for changes made elsewhere (another instance, the admin CLI);
    /// changes made through this server's staff API are sent at once.
    public var eventPollSeconds = 0.1
    /// Event streams per device and session at most; a newer one closes the oldest.
    public var streamsPerDevice = 4
    /// The SSE `retry:` hint, in milliseconds.
    public var eventRetryMilliseconds = 3000
    /// Threads that run writes (enrollments, samples, staff changes), and writes that may wait.
    public var writeThreads = 4
    public var maxQueuedWrites = 4096

    public init() {}
}
