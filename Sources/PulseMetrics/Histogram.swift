import Synchronization

/// A histogram series over fixed buckets (request durations in seconds, sizes in bytes). Observing is
/// two atomic operations: an add to the value's bucket and a compare-and-swap add to the sum; no lock,
/// no allocation. `_count` is the sum of the buckets when scraped, so it always equals `le="+Inf"`.
public final class Histogram: Sendable {
    /// The buckets' upper bounds, strictly increasing, finite; `+Inf` is implicit.
    public let upperBounds: [Double]
    /// Observations per bucket (not cumulative): `counts[i]` for `upperBounds[i-1] < v <= upperBounds[i]`,
    /// the last one past every bound.
    @usableFromInline let counts: [Counter]
    /// The sum of observations, as the bits of a `Double`.
    @usableFromInline let sumBits = Atomic<UInt64>(0)
    /// The sums of `observe(nanoseconds:)` and `observe(count:)`: whole numbers, each added with one atomic
    /// add, so threads observing at once never retry (the `Double` sum needs a compare-and-swap loop).
    @usableFromInline let nanosecondSum = Atomic<UInt64>(0)
    @usableFromInline let countSum = Atomic<UInt64>(0)

    init(upperBounds: [Double]) {
        self.upperBounds = upperBounds
        counts = (0...upperBounds.count).map { _ in Counter() }
    }

    /// Records `value` (NaN is ignored: it would make the sum NaN for good).
    @inlinable public func observe(_ value: Double) {
        guard !value.isNaN else { return }
        // Bucket lists are short (10–20 bounds): a linear scan.
        var index = 0
        while index < upperBounds.count, value > upperBounds[index] { index += 1 }
        counts[index].increment()
        var old = sumBits.load(ordering: .relaxed)
        while true {
            let (exchanged, original) = sumBits.weakCompareExchange(
                expected: old, desired: (Double(bitPattern: old) + value).bitPattern, ordering: .relaxed)
            if exchanged { return }
            old = original
        }
    }

    /// Records a duration given in nanoseconds (exposed in seconds, the base unit): a bucket add and one
    /// atomic add to the sum, no compare-and-swap loop. For the hot path, where two threads observe at once.
    @inlinable public func observe(nanoseconds: UInt64) {
        bucket(Double(nanoseconds) / 1e9).increment()
        nanosecondSum.wrappingAdd(nanoseconds, ordering: .relaxed)
    }

    /// Records a whole count (keys released by an answer): a bucket add and one atomic add to the sum.
    @inlinable public func observe(count: UInt64) {
        bucket(Double(count)).increment()
        countSum.wrappingAdd(count, ordering: .relaxed)
    }

    /// The bucket `value` counts in (`upperBounds[i-1] < value <= upperBounds[i]`, else the last).
    @inlinable func bucket(_ value: Double) -> Counter {
        var index = 0
        while index < upperBounds.count, value > upperBounds[index] { index += 1 }
        return counts[index]
    }

    /// Records a duration in seconds (the base unit).
    @inlinable public func observe(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        observe(Double(seconds) + Double(attoseconds) * 1e-18)
    }

    /// A consistent-enough reading: cumulative bucket counts (ending with `+Inf`), the count and the sum.
    public var snapshot: (cumulative: [UInt64], count: UInt64, sum: Double) {
        var running: UInt64 = 0
        let cumulative = counts.map { counter in
            running &+= counter.value
            return running
        }
        let sum = Double(bitPattern: sumBits.load(ordering: .relaxed)) + Double(nanosecondSum.load(ordering: .relaxed)) / 1e9
            + Double(countSum.load(ordering: .relaxed))
        return (cumulative, running, sum)
    }
}

extension Histogram {
    /// Bounds for request latencies in seconds, 1 ms … 10 s (Prometheus' defaults start at 5 ms; a
    /// signed key fetch on loopback takes well under that).
    public static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// `count` bounds from `start`, each `factor` times the one before (`exponentialBuckets(1024, 4, 8)`:
    /// 1 KiB … 16 MiB).
    public static func exponentialBuckets(start: Double, factor: Double, count: Int) -> [Double] {
        precondition(start > 0 && factor > 1 && (1...64).contains(count), "PulseMetrics: exponentialBuckets(start > 0, factor > 1, count 1…64)")
        var bounds: [Double] = []
        var bound = start
        for _ in 0..<count {
            bounds.append(bound)
            bound *= factor
        }
        return bounds
    }
}
