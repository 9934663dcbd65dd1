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

    @Test func twoThreadsLoseNoIncrementAndNoObservation() async {
        let metrics = MetricsRegistry()
        let counter = metrics.counter("pulse_x_total", help: "x", labels: Route.self)
        let gauge = metrics.gauge("pulse_y", help: "y")
        let histogram = metrics.histogram("pulse_z_seconds", help: "z", buckets: [0.5, 1.5])
        let perThread = 200_000
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<2 {
                group.addTask {
                    for index in 0..<perThread {
                        counter[.keys].increment()
                        gauge.increment()
                        if index % 2 == 0 { gauge.decrement() }
                        histogram.observe(Double(thread))  // 0 into the first bucket, 1 into the second
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
