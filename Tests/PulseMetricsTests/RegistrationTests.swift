import PulseMetrics
import Testing

/// Breaking a naming rule is a mistake in the code: the program stops at registration, with the rule.
@Suite struct RegistrationTests {
    @Test func namingRulesStopTheProgram() async {
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().counter("pulse_requests", help: "no _total") }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().gauge("pulse_open_total", help: "a gauge named like a counter") }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().histogram("pulse_x_total", help: "h", buckets: [1]) }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().histogram("pulse_latency_milliseconds", help: "h", buckets: [1]) }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().gauge("pulse_cache_kilobytes", help: "g") }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().gauge("pulse-dash", help: "g") }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().gauge("9lives", help: "g") }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().gauge("pulse:recorded", help: "g") }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().gauge("pulse_x_count", help: "g") }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().gauge("pulse_x", help: "") }
    }

    @Test func duplicatesAndClashesStopTheProgram() async {
        await #expect(processExitsWith: .failure) {
            let metrics = MetricsRegistry()
            _ = metrics.gauge("pulse_x", help: "a")
            _ = metrics.gauge("pulse_x", help: "b")
        }
        await #expect(processExitsWith: .failure) {
            let metrics = MetricsRegistry()
            _ = metrics.counter("pulse_x_total", help: "a")
            metrics.counter("pulse_x_total", help: "b") { 1 }
        }
        await #expect(processExitsWith: .failure) {
            let metrics = MetricsRegistry()
            metrics.registerBuildInfo(version: "1")
            metrics.registerBuildInfo(version: "2")
        }
    }

    @Test func labelAndBucketRulesStopTheProgram() async {
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().histogram("pulse_h_seconds", help: "h", labels: Le.self, buckets: [1]) }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().counter("pulse_c_total", help: "c", labels: Le.self) }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().counter("pulse_c_total", help: "c", labels: LabelPair<Route, Route>.self) }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().counter("pulse_c_total", help: "c", labels: LabelPair<Forty, Forty>.self) }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().histogram("pulse_h_seconds", help: "h", buckets: [1, 1]) }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().histogram("pulse_h_seconds", help: "h", buckets: [2, 1]) }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().histogram("pulse_h_seconds", help: "h", buckets: []) }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().histogram("pulse_h_seconds", help: "h", buckets: [1, .infinity]) }
    }

    @Test func aLabelSetWhoseIndexDisagreesStopsTheProgram() async {
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().counter("pulse_c_total", help: "c", labels: WrongIndex.self) }
    }

    @Test func whatIsAllowedRegisters() {
        let metrics = MetricsRegistry()
        _ = metrics.counter("pulse_c_total", help: "c", labels: LabelPair<Forty, Route>.self)  // 120 series
        _ = metrics.gauge("pulse_bytes", help: "g")
        _ = metrics.histogram("pulse_h_seconds", help: "h", buckets: [1])
        _ = metrics.counter("pulse_h_seconds_created_total", help: "a name that starts like another")
        let slots = metrics.counter("pulse_slots_total", help: "a bounded set written by hand", labels: Slot.self)
        slots[Slot(slot: 3)].add(5)
        #expect(String(decoding: metrics.exposition(), as: UTF8.self).contains("pulse_slots_total{slot=\"3\"} 5\n"))
        #expect(metrics.exposition().count > 1000)
    }
}
