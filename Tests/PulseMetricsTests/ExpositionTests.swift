import Foundation
import PulseMetrics
import Testing

@Suite struct ExpositionTests {
    /// A registry with one of everything, moved to known values.
    static func knownRegistry() -> MetricsRegistry {
        let metrics = MetricsRegistry()
        let requests = metrics.counter(
            "pulse_http_requests_total", help: "HTTP requests answered, by route and status class.", labels: LabelPair<Route, StatusClass>.self)
        let refusals = metrics.counter("pulse_refusals_total", help: "Refused requests by reason.\nSecond line with a \\ backslash.", labels: Awkward.self)
        let enrollments = metrics.counter("pulse_enrollments_total", help: "Enrollments that succeeded.")
        let streams = metrics.gauge("pulse_event_streams", help: "Open event streams.")
        let queues = metrics.gauge("pulse_queue_items", help: "Items waiting, by route.", labels: Route.self)
        let duration = metrics.histogram(
            "pulse_http_request_duration_seconds", help: "Time to answer, by route.", labels: Route.self, buckets: [0.001, 0.01, 0.1, 1])
        let sizes = metrics.histogram("pulse_asset_size_bytes", help: "Asset sizes.", buckets: Histogram.exponentialBuckets(start: 1024, factor: 4, count: 3))
        metrics.gauge("pulse_write_queue_depth", help: "Writes waiting for the writer.") { 3 }
        metrics.gauge("pulse_sessions", help: "Sessions by route, read when scraped.", labels: Route.self) { route in route == .keys ? 2.5 : 0 }
        metrics.registerBuildInfo(version: "0.2.0 \"dev\"\\x")

        for _ in 0..<1027 { requests[.keys, .success].increment() }
        requests[.keys, .clientError].add(3)
        requests[.manifest, .serverError].increment()
        refusals[.quote].increment()
        refusals[.newline].add(2)
        enrollments.add(12)
        streams.add(10)
        streams.decrement()
        queues[.other].set(-4)
        for value in [0.0005, 0.001, 0.002, 0.5, 7, -1, .nan, .infinity] { duration[.keys].observe(value) }
        duration[.manifest].observe(.milliseconds(20))
        sizes.observe(1024)
        sizes.observe(5000)
        sizes.observe(1e9)
        return metrics
    }

    static let golden = """
        # HELP pulse_asset_size_bytes Asset sizes.
        # TYPE pulse_asset_size_bytes histogram
        pulse_asset_size_bytes_bucket{le="1024"} 1
        pulse_asset_size_bytes_bucket{le="4096"} 1
        pulse_asset_size_bytes_bucket{le="16384"} 2
        pulse_asset_size_bytes_bucket{le="+Inf"} 3
        pulse_asset_size_bytes_sum 1000006024
        pulse_asset_size_bytes_count 3
        # HELP pulse_build_info The version of the running build; always 1.
        # TYPE pulse_build_info gauge
        pulse_build_info{version="0.2.0 \\"dev\\"\\\\x"} 1
        # HELP pulse_enrollments_total Enrollments that succeeded.
        # TYPE pulse_enrollments_total counter
        pulse_enrollments_total 12
        # HELP pulse_event_streams Open event streams.
        # TYPE pulse_event_streams gauge
        pulse_event_streams 9
        # HELP pulse_http_request_duration_seconds Time to answer, by route.
        # TYPE pulse_http_request_duration_seconds histogram
        pulse_http_request_duration_seconds_bucket{route="keys",le="0.001"} 3
        pulse_http_request_duration_seconds_bucket{route="keys",le="0.01"} 4
        pulse_http_request_duration_seconds_bucket{route="keys",le="0.1"} 4
        pulse_http_request_duration_seconds_bucket{route="keys",le="1"} 5
        pulse_http_request_duration_seconds_bucket{route="keys",le="+Inf"} 7
        pulse_http_request_duration_seconds_sum{route="keys"} +Inf
        pulse_http_request_duration_seconds_count{route="keys"} 7
        pulse_http_request_duration_seconds_bucket{route="manifest",le="0.001"} 0
        pulse_http_request_duration_seconds_bucket{route="manifest",le="0.01"} 0
        pulse_http_request_duration_seconds_bucket{route="manifest",le="0.1"} 1
        pulse_http_request_duration_seconds_bucket{route="manifest",le="1"} 1
        pulse_http_request_duration_seconds_bucket{route="manifest",le="+Inf"} 1
        pulse_http_request_duration_seconds_sum{route="manifest"} 0.02
        pulse_http_request_duration_seconds_count{route="manifest"} 1
        pulse_http_request_duration_seconds_bucket{route="other",le="0.001"} 0
        pulse_http_request_duration_seconds_bucket{route="other",le="0.01"} 0
        pulse_http_request_duration_seconds_bucket{route="other",le="0.1"} 0
        pulse_http_request_duration_seconds_bucket{route="other",le="1"} 0
        pulse_http_request_duration_seconds_bucket{route="other",le="+Inf"} 0
        pulse_http_request_duration_seconds_sum{route="other"} 0
        pulse_http_request_duration_seconds_count{route="other"} 0
        # HELP pulse_http_requests_total HTTP requests answered, by route and status class.
        # TYPE pulse_http_requests_total counter
        pulse_http_requests_total{route="keys",status="2xx"} 1027
        pulse_http_requests_total{route="keys",status="4xx"} 3
        pulse_http_requests_total{route="keys",status="5xx"} 0
        pulse_http_requests_total{route="manifest",status="2xx"} 0
        pulse_http_requests_total{route="manifest",status="4xx"} 0
        pulse_http_requests_total{route="manifest",status="5xx"} 1
        pulse_http_requests_total{route="other",status="2xx"} 0
        pulse_http_requests_total{route="other",status="4xx"} 0
        pulse_http_requests_total{route="other",status="5xx"} 0
        # HELP pulse_queue_items Items waiting, by route.
        # TYPE pulse_queue_items gauge
        pulse_queue_items{route="keys"} 0
        pulse_queue_items{route="manifest"} 0
        pulse_queue_items{route="other"} -4
        # HELP pulse_refusals_total Refused requests by reason.\\nSecond line with a \\\\ backslash.
        # TYPE pulse_refusals_total counter
        pulse_refusals_total{reason="say \\"no\\""} 1
        pulse_refusals_total{reason="C:\\\\path"} 0
        pulse_refusals_total{reason="two\\nlines"} 2
        # HELP pulse_sessions Sessions by route, read when scraped.
        # TYPE pulse_sessions gauge
        pulse_sessions{route="keys"} 2.5
        pulse_sessions{route="manifest"} 0
        pulse_sessions{route="other"} 0
        # HELP pulse_write_queue_depth Writes waiting for the writer.
        # TYPE pulse_write_queue_depth gauge
        pulse_write_queue_depth 3

        """

    @Test func knownRegistryByteForByte() {
        let text = String(decoding: Self.knownRegistry().exposition(), as: UTF8.self)
        #expect(text == Self.golden)
        #expect(MetricsRegistry.contentType == "text/plain; version=0.0.4; charset=utf-8")
    }

    @Test func promtoolAcceptsTheKnownRegistryWithoutALint() throws {
        let (status, output) = try Promtool.check(Self.knownRegistry().exposition())
        #expect(status == 0, "promtool: \(output)")
        #expect(output.isEmpty, "promtool: \(output)")
    }

    @Test func promtoolAcceptsProcessMetricsAndBuildInfo() throws {
        let metrics = MetricsRegistry()
        metrics.registerProcessMetrics()
        metrics.registerBuildInfo(version: "0.2.0")
        let exposition = metrics.exposition()
        let (status, output) = try Promtool.check(exposition)
        #expect(status == 0 && output.isEmpty, "promtool: \(output)")
        let names = String(decoding: exposition, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ")[0] }
        #expect(names == [
            "process_cpu_seconds_total", "process_max_fds", "process_open_fds", "process_resident_memory_bytes", "process_start_time_seconds",
            "process_virtual_memory_bytes", "pulse_build_info{version=\"0.2.0\"}",
        ])
    }

    /// Promtool is a real check: it fails the output of a registry without the rules this one enforces.
    @Test func promtoolRejectsWhatTheRegistryRefuses() throws {
        let bad = Array("# HELP x_milliseconds y\n# TYPE x_milliseconds counter\nx_milliseconds 1\n".utf8)
        let (status, output) = try Promtool.check(bad)
        #expect(status != 0)
        #expect(output.contains("_total") || output.contains("base unit"))
    }

    @Test func valuesAreWrittenAsPrometheusReadsThem() {
        let metrics = MetricsRegistry()
        let values: [Double] = [0, -0.0, 1, 1e-05, 0.1 + 0.2, 123_456_789_012, 9_007_199_254_740_992, 1e17, 1e19, 1.5e300, -.infinity]
        let names = (0..<values.count).map { "pulse_value\($0 < 10 ? "0" : "")\($0)" }
        for (name, value) in zip(names, values) { metrics.gauge(name, help: "v") { value } }
        let lines = String(decoding: metrics.exposition(), as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(lines.map { String($0.split(separator: " ")[1]) } == [
            "0", "0", "1", "1e-05", "0.30000000000000004", "123456789012", "9007199254740992", "100000000000000000", "1e+19", "1.5e+300", "-Inf",
        ])
        // NaN from a reading (a /proc file that could not be read) leaves the metric out of the scrape.
        metrics.gauge("pulse_unreadable", help: "u") { .nan }
        #expect(!String(decoding: metrics.exposition(), as: UTF8.self).contains("pulse_unreadable"))
    }
}
