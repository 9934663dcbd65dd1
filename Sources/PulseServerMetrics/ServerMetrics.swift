import PulseHTTPServer
import PulseMetrics
import PulseObservability
import PulseServerStorage
import PulseSyncAPI
import Synchronization

/// pulse-server's metrics (`--metrics-listen`), apart from the routes they count: requests, durations,
/// refusals, enrollments and keys answers come from each finished exchange (route template, status, the
/// access log's note); writes and live advances from `SyncObserver`; open streams, queued writes and
/// PostgreSQL reconnects are read when scraped. docs/operations.md lists every family.
///
/// Made before the server (it is the sync responder's observer); `watch(sync:server:storage:)` adds what is
/// read from them once they exist.
public final class ServerMetrics: ExchangeMeter, SyncObserver {
    public let registry: MetricsRegistry
    let requests: CounterFamily<LabelPair<ServerRoute, StatusClass>>
    let duration: HistogramFamily<ServerRoute>
    let refusals: CounterFamily<RefusalReason>
    let enrollments: CounterFamily<EnrollmentResult>
    let keysReleased: Histogram
    let storageErrors: CounterFamily<StorageErrorKind>
    let advances: Counter
    let advanceDelivery: Histogram
    let writeDuration: Histogram

    /// Bounds of `pulse_keys_released_per_answer`: how many slide keys one answer released.
    public static let releasedBuckets: [Double] = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500]

    public init(version: String) {
        let registry = MetricsRegistry()
        self.registry = registry
        requests = registry.counter(
            HTTPFamilies.requestsName, help: HTTPFamilies.requestsHelp, labels: LabelPair<ServerRoute, StatusClass>.self)
        duration = registry.histogram(
            HTTPFamilies.durationName, help: HTTPFamilies.durationHelp, labels: ServerRoute.self, buckets: Histogram.latencyBuckets)
        refusals = registry.counter(
            "pulse_sync_refusals_total",
            help: "Requests answered no (4xx/5xx) by reason, the access log's note: bad-signature, stale, rate-limited, out-of-scope, …",
            labels: RefusalReason.self)
        enrollments = registry.counter(
            "pulse_enrollments_total", help: "POST /api/sync/enroll answers by result.", labels: EnrollmentResult.self)
        keysReleased = registry.histogram(
            "pulse_keys_released_per_answer", help: "Slide keys released by each 200 answer of GET /api/sync/keys.", buckets: Self.releasedBuckets)
        storageErrors = registry.counter(
            "pulse_storage_errors_total",
            help: "Requests that failed on storage: unavailable (the database away, a 503) or error (a 500).", labels: StorageErrorKind.self)
        advances = registry.counter("pulse_advances_total", help: "Live advances (the frontier moved) the event hub delivered to open streams.")
        advanceDelivery = registry.histogram(
            "pulse_advance_delivery_seconds", help: "From an advance's commit to its write to one event stream, per stream.",
            buckets: Histogram.latencyBuckets)
        writeDuration = registry.histogram(
            "pulse_write_duration_seconds", help: "Time a queued write (enroll, diag, a staff change) took on a write thread, its commit included.",
            buckets: Histogram.latencyBuckets)
        registry.registerProcessMetrics()
        registry.registerBuildInfo(version: version)
    }

    /// Adds the families read when scraped: open event streams, queued writes, the public listener's
    /// connections, and with PostgreSQL its reconnects.
    public func watch(sync: SyncAPI, server: HTTPServer, storage: any ServerStorage) {
        registry.gauge("pulse_event_streams_open", help: "Event streams (GET /api/sync/events) open now.") { Double(sync.openStreams) }
        registry.gauge("pulse_write_queue_depth", help: "Writes waiting for a write thread now (when the queue is full, writes are answered 503).") {
            Double(sync.queuedWrites)
        }
        HTTPFamilies.registerConnections(of: server, in: registry)
        if let postgres = storage as? PostgresStorage {
            registry.counter(
                "pulse_storage_reconnects_total",
                help: "PostgreSQL reconnections: pooled connections found dead or lost in use, and the change listener's.",
                labels: StorageConnection.self
            ) { connection in
                let counts = postgres.reconnects
                return Double(connection == .pool ? counts.pool : counts.listener)
            }
        }
    }

    // MARK: ExchangeMeter

    public func record(_ exchange: HTTPExchange) {
        let route = ServerRoute(target: exchange.target)
        let status = exchange.status
        requests[route, StatusClass(status: status)].increment()
        duration[route].observe(nanoseconds: exchange.durationNanoseconds)
        switch route {
        case .keys where status == 200:
            if let released = exchange.note.releasedCount { keysReleased.observe(count: UInt64(released)) }
        case .enroll:
            enrollments[EnrollmentResult(note: exchange.note)].increment()
        default:
            break
        }
        guard status >= 400 else { return }
        if status >= 500 {
            if exchange.note == "db-unavailable" { storageErrors[.unavailable].increment() }
            else if exchange.note == "error" { storageErrors[.error].increment() }
        }
        switch route {
        case .healthz, .livez, .readyz: return  // a probe's 503 is its answer, not a refusal
        default: refusals[RefusalReason(note: exchange.note, method: exchange.method)].increment()
        }
    }

    // MARK: SyncObserver

    public func writeFinished(seconds: Double) { writeDuration.observe(seconds) }
    public func advanceDelivered(seconds: Double) { advanceDelivery.observe(seconds) }
    public func advanceSeen() { advances.increment() }
}
