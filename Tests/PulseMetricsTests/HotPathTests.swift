import Foundation
import PulseMetrics
import Testing

@Suite struct HotPathTests {
    @Test func bucketsFollowLessOrEqual() {
        let histogram = MetricsRegistry().histogram("pulse_x_seconds", help: "x", buckets: [1, 2, 4])
        for value in [-5, 0, 1, 1.0000001, 2, 3.9, 4, 4.1, .greatestFiniteMagnitude, .infinity, .nan] { histogram.observe(value) }
        let (cumulative, count, sum) = histogram.snapshot
        #expect(cumulative == [3, 5, 7, 10])  // ≤1: -5, 0, 1; ≤2: +1.0000001, 2; ≤4: +3.9, 4; +Inf: 4.1, max, inf
        #expect(count == 10)  // NaN is not counted
        #expect(sum == .infinity)
        histogram.observe(.seconds(1) + .milliseconds(500))
        #expect(histogram.snapshot.cumulative == [3, 6, 8, 11])
    }

    @Test func nanosecondsAndCountsLandInTheirBucketsAndSums() {
        let metrics = MetricsRegistry()
        let durations = metrics.histogram("pulse_d_seconds", help: "d", buckets: [0.001, 0.01])
        for nanoseconds: UInt64 in [0, 999_999, 1_000_000, 1_000_001, 10_000_000, 10_000_001, 3_000_000_000] { durations.observe(nanoseconds: nanoseconds) }
        durations.observe(0.5)  // a Double observation adds to the same sum
        let (cumulative, count, sum) = durations.snapshot
        #expect(cumulative == [3, 5, 8])  // ≤ 1 ms: 0, 999_999, 1_000_000 (the bound itself); ≤ 10 ms: +1_000_001, 10_000_000
        #expect(count == 8)
        #expect(abs(sum - 3.523000001) < 1e-9)
        let released = metrics.histogram("pulse_k", help: "k", buckets: [0, 1, 5])
        for keys: UInt64 in [0, 0, 1, 2, 5, 6, 300] { released.observe(count: keys) }
        #expect(released.snapshot.cumulative == [2, 3, 5, 7] && released.snapshot.sum == 314)
        #expect(String(decoding: metrics.exposition(), as: UTF8.self).contains("pulse_k_sum 314\n"))
    }

    @Test func twoThreadsLoseNoIncrementAndNoObservation() async {
        let metrics = MetricsRegistry()
        let counter = metrics.counter("pulse_x_total", help: "x", labels: Route.self)
        let gauge = metrics.gauge("pulse_y", help: "y")
        let histogram = metrics.histogram("pulse_z_seconds", help: "z", buckets: [0.5, 1.5])
        let timed = metrics.histogram("pulse_t_seconds", help: "t", buckets: [0.5])
        let perThread = 200_000
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<2 {
                group.addTask {
                    for index in 0..<perThread {
                        counter[.keys].increment()
                        gauge.increment()
                        if index % 2 == 0 { gauge.decrement() }
                        histogram.observe(Double(thread))  // 0 into the first bucket, 1 into the second
                        timed.observe(nanoseconds: 1_000_000_000)
                    }
                }
            }
        }
        #expect(counter[.keys].value == UInt64(2 * perThread))
        #expect(counter[.manifest].value == 0)
        #expect(gauge.value == Int64(perThread))
        let (cumulative, count, sum) = histogram.snapshot
        #expect(cumulative == [UInt64(perThread), UInt64(2 * perThread), UInt64(2 * perThread)])
        #expect(count == UInt64(2 * perThread))
        #expect(sum == Double(perThread))  // whole numbers: the compare-and-swap loop lost none
        #expect(timed.snapshot.count == UInt64(2 * perThread) && timed.snapshot.sum == Double(2 * perThread))
    }

    @Test func familiesHandOutTheSameSeries() {
        let metrics = MetricsRegistry()
        let requests = metrics.counter("pulse_r_total", help: "r", labels: LabelPair<Route, StatusClass>.self)
        let kept = requests[.keys, .success]
        kept.increment()
        requests[.keys, .success].add(2)
        #expect(kept.value == 3 && requests[LabelPair(.keys, .success)] === kept)
        #expect(requests[.keys, .clientError] !== kept)
    }
}
