import Foundation
import PulseServerStorage

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
    /// Per registration token, from every address together, unless the token sets its own: a door rush of
    /// 300 at once, then 20 a second (72,000 an hour); a leaked link cannot enroll faster.
    public var tokenEnrollLimit = RateLimit(rate: 20, burst: 300)
    /// Event streams open at once by the devices one registration token enrolled (per instance), unless the
    /// token sets its own: half of the server's connections by default (`serve` sets it from
    /// `--max-connections`), so one leaked link can never take them all.
    public var tokenMaxStreams = 10_000
    /// Per presenter or moderator staff token, on the staff API's changes (done or refused; each is a committed
    /// audit row): a clicker's pace with room to spare, so a low-privilege token cannot write the audit log
    /// (and the disk) at the rate it sends. An admin token is not limited (it may mint tokens anyway).
    public var staffChangeLimit = RateLimit(rate: 10, burst: 60)
    /// `Retry-After` of a stream refused for its token's cap, in seconds.
    public var streamRetrySeconds = 30
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
    /// Seconds a signed answer may be believed (`exp` - `iat` of its `Pulse-Signature`; `serve --answer-ttl`).
    public var answerTTL: Int64 = 3600
    /// Sign the manifest, series manifest, keys and answer-key answers (issue 21). Off only for the unsigned
    /// baseline of Scripts/bench/server (`serve --answer-signing off`).
    public var signAnswers = true

    public init() {}
}
