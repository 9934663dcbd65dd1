import Foundation
import PulseMetrics
import Synchronization

enum BenchRoute: String, MetricLabel {
    static let labelName = "route"
    case enroll, manifest, keys, time, diag, events, staff, other
}

enum BenchStatus: String, MetricLabel {
    static let labelName = "status"
    case informational = "1xx", success = "2xx", redirection = "3xx", clientError = "4xx", serverError = "5xx"
}

/// The bare floor and a lock, beside the registry's series.
final class Baselines: Sendable {
    let atomic = Atomic<UInt64>(0)
    let mutex = Mutex<UInt64>(0)
}

struct MetricsBench {
    let operations: Int
    let runs: Int

    let registry = MetricsRegistry()
    let counter: Counter
    let requests: CounterFamily<LabelPair<BenchRoute, BenchStatus>>
    let gauge: Gauge
    let histogram: Histogram
    let baselines = Baselines()

    init(operations: Int, runs: Int) {
        self.operations = operations
        self.runs = runs
        counter = registry.counter("pulse_bench_total", help: "A counter.")
        requests = registry.counter("pulse_bench_requests_total", help: "By route and status.", labels: LabelPair<BenchRoute, BenchStatus>.self)
        gauge = registry.gauge("pulse_bench_streams", help: "A gauge.")
        histogram = registry.histogram("pulse_bench_duration_seconds", help: "A histogram.", buckets: Histogram.latencyBuckets)
    }

    /// The operations measured, by name; each runs `count` times. Where a thread index matters it picks
    /// the series (`requests[…]` on two threads hits two series; the others share one).
    func operation(_ name: String) -> @Sendable (Int, Int) -> Void {
        let counter = counter, requests = requests, gauge = gauge, histogram = histogram, baselines = baselines
        switch name {
        case "Atomic.wrappingAdd (floor)": return { count, _ in for _ in 0..<count { baselines.atomic.wrappingAdd(1, ordering: .relaxed) } }
        case "Mutex<UInt64> += 1 (a lock)": return { count, _ in for _ in 0..<count { baselines.mutex.withLock { $0 &+= 1 } } }
        case "counter.increment()": return { count, _ in for _ in 0..<count { counter.increment() } }
        case "gauge.increment()": return { count, _ in for _ in 0..<count { gauge.increment() } }
        case "requests[.keys, .success].increment()":
            return { count, _ in for _ in 0..<count { requests[.keys, .success].increment() } }
        case "histogram.observe(0.003)": return { count, _ in for _ in 0..<count { histogram.observe(0.003) } }
        case "histogram.observe(varying)":
            return { count, thread in for index in 0..<count { histogram.observe(Double(index & 1023) * 1e-5 + Double(thread)) } }
        default: preconditionFailure(name)
        }
    }

    static let names = [
        "Atomic.wrappingAdd (floor)", "Mutex<UInt64> += 1 (a lock)", "counter.increment()", "gauge.increment()",
        "requests[.keys, .success].increment()", "histogram.observe(0.003)", "histogram.observe(varying)",
    ]

    /// ns per operation for each thread count, the median of `runs` (interleaved by operation).
    func run() -> Int32 {
        print("operations per thread=\(operations) runs=\(runs) cores=\(ProcessInfo.processInfo.activeProcessorCount) load=\(load())")
        var results: [String: [Int: [Double]]] = [:]
        for _ in 0..<runs {
            for name in Self.names {
                for threads in [1, 2] { results[name, default: [:]][threads, default: []].append(nanosecondsPerOperation(operation(name), threads: threads)) }
            }
        }
        print("ns per operation (median; 2 threads: both on the same series, wall time per thread)")
        print("operation                                   1 thread  2 threads  1t/floor  2t/floor")
        func medianOf(_ name: String, _ threads: Int) -> Double { median(results[name]?[threads] ?? []) }
        let floor = (one: medianOf(Self.names[0], 1), two: medianOf(Self.names[0], 2))
        for name in Self.names {
            let one = medianOf(name, 1), two = medianOf(name, 2)
            print(String(format: "%@ %8.2f %10.2f %9.2f %9.2f", name.padding(toLength: 42, withPad: " ", startingAt: 0), one, two, one / floor.one, two / floor.two))
        }
        // Nothing lost: every operation above counted.
        let expected = UInt64(runs * operations * 3)
        guard counter.value == expected, requests[.keys, .success].value == expected, gauge.value == Int64(expected), histogram.snapshot.count == expected * 2
        else {
            FileHandle.standardError.write(Data("pulse-bench-blocks: counts do not add up\n".utf8))
            return 1
        }
        print("load after=\(load())")
        return 0
    }

    /// `count` of each operation on this thread, no clock: run under valgrind to count allocations.
    func count(_ count: Int) -> Int32 {
        for name in Self.names.dropFirst(2) { operation(name)(count, 0) }
        _ = registry.exposition()
        print("count=\(count) counter=\(counter.value) histogram=\(histogram.snapshot.count)")
        return 0
    }

    /// Wall time per operation on each of `threads` threads started together.
    func nanosecondsPerOperation(_ body: @escaping @Sendable (Int, Int) -> Void, threads: Int) -> Double {
        let ready = Atomic<Int>(0)
        let elapsed = Mutex<[Double]>([])
        let group = DispatchGroup()
        let operations = operations
        for index in 0..<threads {
            group.enter()
            let thread = Thread {
                ready.wrappingAdd(1, ordering: .sequentiallyConsistent)
                while ready.load(ordering: .sequentiallyConsistent) < threads {}
                let clock = ContinuousClock(), start = clock.now
                body(operations, index)
                let took = clock.now - start
                elapsed.withLock { $0.append(milliseconds(took) * 1e6 / Double(operations)) }
                group.leave()
            }
            thread.start()
        }
        group.wait()
        return elapsed.withLock { $0.max() ?? 0 }
    }

    func load() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
    }
}
