import PulseHTTPServer
import PulseMetrics
import PulseOrigin

/// pulse-origin's metrics (`--metrics-listen`): its requests by route and status class, their durations, the
/// body bytes sent, the blob cache's hits and misses (from the access log's outcome note), the verifications
/// and corrupt blobs the origin counted, and the process. docs/operations.md lists them.
public final class OriginMetrics: ExchangeMeter {
    public let registry: MetricsRegistry
    let requests: CounterFamily<LabelPair<OriginRoute, StatusClass>>
    let duration: HistogramFamily<OriginRoute>
    let sentBytes: Counter
    let hits: CounterFamily<CacheTier>
    let misses: CounterFamily<CacheMiss>

    /// Registers the families on a new registry; `origin` is read when scraped.
    public init(origin: Origin, version: String) {
        let registry = MetricsRegistry()
        self.registry = registry
        requests = registry.counter(
            HTTPFamilies.requestsName, help: HTTPFamilies.requestsHelp, labels: LabelPair<OriginRoute, StatusClass>.self)
        duration = registry.histogram(
            HTTPFamilies.durationName, help: HTTPFamilies.durationHelp, labels: OriginRoute.self, buckets: Histogram.latencyBuckets)
        sentBytes = registry.counter(
            "pulse_origin_sent_bytes_total", help: "Body bytes of the answers sent (every route; a HEAD or 304 sends none).")
        hits = registry.counter(
            "pulse_origin_cache_hits_total", help: "Blob answers from a blob already verified, by where its bytes came from.",
            labels: CacheTier.self)
        misses = registry.counter(
            "pulse_origin_cache_misses_total",
            help: "Blob requests not answered from a verified blob: hashed for this request first (verified), no such blob (missing), "
                + "corrupt, or the verifiers busy (busy, a 503).",
            labels: CacheMiss.self)
        registry.counter("pulse_origin_verifications_total", help: "Blob files hashed against their name (each verification reads the file once).") {
            Double(origin.verifications)
        }
        registry.counter(
            "pulse_origin_corrupt_blobs_total", help: "Blob files found corrupt (wrong bytes, too large, not a regular file), each version of a file once."
        ) { Double(origin.corruptBlobs) }
        registry.registerProcessMetrics()
        registry.registerBuildInfo(version: version)
    }

    /// Adds the connection gauges of the public listener.
    public func watch(_ server: HTTPServer) {
        HTTPFamilies.registerConnections(of: server, in: registry)
    }

    public func record(_ exchange: HTTPExchange) {
        let route = OriginRoute(target: exchange.target)
        requests[route, StatusClass(status: exchange.status)].increment()
        duration[route].observe(nanoseconds: exchange.durationNanoseconds)
        if exchange.bodyBytes > 0 { sentBytes.add(UInt64(exchange.bodyBytes)) }
        if route == .asset { countOutcome(exchange.note) }
    }

    /// The asset route's outcome note (`memory`, `disk`, `verified`, `miss`, `corrupt`, `busy`, …).
    func countOutcome(_ note: String) {
        switch note {
        case "memory": hits[.memory].increment()
        case "disk": hits[.disk].increment()
        case "verified": misses[.verified].increment()
        case "miss": misses[.missing].increment()
        case "corrupt": misses[.corrupt].increment()
        case "busy", "changing": misses[.busy].increment()
        default: break
        }
    }
}

/// pulse-origin's `route` label: the route's template, never the raw path.
public enum OriginRoute: Int, MetricLabel {
    public static let labelName = "route"
    case asset, appconfig, healthz, livez, readyz, other
    static let values = ["/api/sync/asset/:hash", "/api/sync/appconfig", "/healthz", "/livez", "/readyz", "other"]
    public var labelValue: String { Self.values[rawValue] }
    @inlinable public var labelIndex: Int { rawValue }

    /// The literals the routes are matched against.
    enum Literal {
        static let asset = Array("/api/sync/asset/".utf8), appconfig = Array("/api/sync/appconfig".utf8)
        static let healthz = Array("/healthz".utf8), livez = Array("/livez".utf8), readyz = Array("/readyz".utf8)
    }

    /// The template of a request target's route (what the JSON access log calls `http.route`).
    public static let template: @Sendable ([UInt8]) -> String = { OriginRoute(target: $0).labelValue }

    /// The route of a request target, as Origin routes it.
    init(target: [UInt8]) {
        if TargetMatch.has(target, Literal.asset) { self = .asset }
        else if TargetMatch.ends(target, Literal.appconfig) { self = .appconfig }
        else if TargetMatch.ends(target, Literal.healthz) { self = .healthz }
        else if TargetMatch.ends(target, Literal.livez) { self = .livez }
        else if TargetMatch.ends(target, Literal.readyz) { self = .readyz }
        else { self = .other }
    }
}

enum CacheTier: Int, MetricLabel {
    static let labelName = "tier"
    case memory, disk
    var labelValue: String { ["memory", "disk"][rawValue] }
    var labelIndex: Int { rawValue }
}

enum CacheMiss: Int, MetricLabel {
    static let labelName = "reason"
    case verified, missing, corrupt, busy
    var labelValue: String { ["verified", "missing", "corrupt", "busy"][rawValue] }
    var labelIndex: Int { rawValue }
}
