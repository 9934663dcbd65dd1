import Synchronization

/// The metrics of one process, and their exposition for a Prometheus scrape.
///
///     enum Route: String, MetricLabel { static let labelName = "route"; case keys, manifest, other }
///     enum StatusClass: String, MetricLabel { static let labelName = "status"; case success = "2xx", … }
///
///     let metrics = MetricsRegistry()
///     let requests = metrics.counter("pulse_http_requests_total", help: "HTTP requests answered.",
///                                    labels: LabelPair<Route, StatusClass>.self)
///     let duration = metrics.histogram("pulse_http_request_duration_seconds", help: "…",
///                                      labels: Route.self, buckets: Histogram.latencyBuckets)
///     metrics.registerProcessMetrics()
///     metrics.registerBuildInfo(version: ToolVersion.current)
///
///     requests[.keys, .success].increment()          // per request: atomic adds, no lock
///     duration[.keys].observe(elapsed)
///     let body = metrics.exposition()                // GET /metrics, `MetricsRegistry.contentType`
///
/// Registering is done once at start-up and checks the Prometheus conventions; breaking one is a
/// mistake in the code and stops the program with the rule it broke (as client_golang's MustRegister
/// panics): names `[a-zA-Z_][a-zA-Z0-9_]*`, counters ending in `_total` and nothing else ending so,
/// base units only (`_seconds`, `_bytes`; never `_milliseconds`, `_kilobytes`, `_percent`), help text
/// given, no name twice (a histogram also claims `_bucket`, `_sum`, `_count`), label names valid, not
/// reserved (`__…`, and `le`, `quantile`), at most `maximumSeries` series per metric.
public final class MetricsRegistry: Sendable {
    /// `Content-Type` of `exposition()`.
    public static let contentType = Exposition.contentType
    /// The most series one metric may have: a label set is a closed enum, and this keeps a product of
    /// enums honest too.
    public static let maximumSeries = 1_000

    private struct State {
        /// Sorted by name: the exposition's order.
        var metrics: [any ExposedMetric] = []
        /// Every name a sample line may carry, to refuse a second metric writing the same lines.
        var claimed: Set<String> = []
    }

    private let state = Mutex(State())

    public init() {}

    // MARK: counters

    /// A counter without labels.
    public func counter(_ name: String, help: String) -> Counter {
        counter(name, help: help, labels: NoLabels.self)[NoLabels()]
    }

    /// A counter with one series per value of `labels`.
    public func counter<Labels: MetricLabelSet>(_ name: String, help: String, labels: Labels.Type) -> CounterFamily<Labels> {
        register(name, help: help, kind: .counter, make: Counter.init) { .integer($0.value) }
    }

    /// A counter read when scraped (a count kept elsewhere: a C library's, another module's).
    public func counter(_ name: String, help: String, reading: @escaping @Sendable () -> Double) {
        Naming.check(name, help: help, kind: .counter, labels: [], series: 1)
        add(ReadingExposure(name: name, help: help, kind: .counter, read: { [reading()] }), claiming: [name])
    }

    /// A counter per value of `labels`, read when scraped (counts kept elsewhere: a pool's reconnects).
    public func counter<Labels: MetricLabelSet>(
        _ name: String, help: String, labels: Labels.Type, reading: @escaping @Sendable (Labels) -> Double
    ) {
        Naming.check(name, help: help, kind: .counter, labels: Labels.labelNames, series: Labels.allLabelSets.count)
        let sets = Labels.allLabelSets
        add(
            ReadingExposure(
                name: name, help: help, kind: .counter, labelText: sets.map { Exposition.labelText(names: Labels.labelNames, values: $0.labelValues) },
                read: { sets.map(reading) }),
            claiming: [name])
    }

    // MARK: gauges

    /// A gauge without labels.
    public func gauge(_ name: String, help: String) -> Gauge {
        gauge(name, help: help, labels: NoLabels.self)[NoLabels()]
    }

    /// A gauge with one series per value of `labels`.
    public func gauge<Labels: MetricLabelSet>(_ name: String, help: String, labels: Labels.Type) -> GaugeFamily<Labels> {
        register(name, help: help, kind: .gauge, make: Gauge.init) { .signed($0.value) }
    }

    /// A counter or gauge family: checked, made, and exposed one sample line per series.
    private func register<Labels: MetricLabelSet, Series: AnyObject & Sendable>(
        _ name: String, help: String, kind: Exposition.Kind, make: () -> Series, value: @escaping @Sendable (Series) -> Exposition.Value
    ) -> MetricFamily<Labels, Series> {
        Naming.check(name, help: help, kind: kind, labels: Labels.labelNames, series: Labels.allLabelSets.count)
        let family = MetricFamily<Labels, Series>(SeriesTable(make))
        add(SeriesExposure(name: name, help: help, kind: kind, family: family, value: value), claiming: [name])
        return family
    }

    /// A gauge read when scraped: `metrics.gauge("pulse_write_queue_depth", help: "…") { Double(queue.depth) }`.
    public func gauge(_ name: String, help: String, reading: @escaping @Sendable () -> Double) {
        Naming.check(name, help: help, kind: .gauge, labels: [], series: 1)
        add(ReadingExposure(name: name, help: help, kind: .gauge, read: { [reading()] }), claiming: [name])
    }

    /// A gauge per value of `labels`, read when scraped.
    public func gauge<Labels: MetricLabelSet>(
        _ name: String, help: String, labels: Labels.Type, reading: @escaping @Sendable (Labels) -> Double
    ) {
        Naming.check(name, help: help, kind: .gauge, labels: Labels.labelNames, series: Labels.allLabelSets.count)
        let sets = Labels.allLabelSets
        add(
            ReadingExposure(
                name: name, help: help, kind: .gauge, labelText: sets.map { Exposition.labelText(names: Labels.labelNames, values: $0.labelValues) },
                read: { sets.map(reading) }),
            claiming: [name])
    }

    // MARK: histograms

    /// A histogram without labels; `buckets` are the upper bounds, strictly increasing and finite.
    public func histogram(_ name: String, help: String, buckets: [Double]) -> Histogram {
        histogram(name, help: help, labels: NoLabels.self, buckets: buckets)[NoLabels()]
    }

    /// A histogram with one series per value of `labels`, all over the same `buckets`.
    public func histogram<Labels: MetricLabelSet>(_ name: String, help: String, labels: Labels.Type, buckets: [Double]) -> HistogramFamily<Labels> {
        Naming.check(name, help: help, kind: .histogram, labels: Labels.labelNames, series: Labels.allLabelSets.count)
        precondition(!buckets.isEmpty && buckets.allSatisfy(\.isFinite), "PulseMetrics: \(name): buckets must be finite and not empty (+Inf is implicit)")
        precondition(zip(buckets, buckets.dropFirst()).allSatisfy { $0 < $1 }, "PulseMetrics: \(name): buckets must be strictly increasing")
        let family = HistogramFamily<Labels>(SeriesTable { Histogram(upperBounds: buckets) })
        add(HistogramExposure(name: name, help: help, family: family), claiming: [name, name + "_bucket", name + "_sum", name + "_count"])
        return family
    }

    // MARK: exposition

    /// Every metric in the text format 0.0.4, sorted by name: the body of `GET /metrics`.
    public func exposition() -> [UInt8] {
        let metrics = state.withLock { $0.metrics }
        var writer = Exposition()
        for metric in metrics { metric.expose(into: &writer) }
        return writer.bytes
    }

    func add(_ metric: any ExposedMetric, claiming names: [String]) {
        state.withLock { state in
            for name in names {
                precondition(state.claimed.insert(name).inserted, "PulseMetrics: \(name) is registered twice")
            }
            let position = state.metrics.firstIndex { $0.name > metric.name } ?? state.metrics.endIndex
            state.metrics.insert(metric, at: position)
        }
    }
}
