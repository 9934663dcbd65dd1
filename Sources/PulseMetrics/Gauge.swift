import Synchronization

/// A gauge series: a count that goes up and down (open event streams, queue depth). Each change is one
/// relaxed atomic operation. A value that is read rather than counted (memory, a queue's length held
/// elsewhere) is better a gauge read at scrape time: `MetricsRegistry.gauge(_:help:reading:)`.
public final class Gauge: Sendable {
    @usableFromInline let current = Atomic<Int64>(0)

    init() {}

    @inlinable public func increment() { add(1) }
    @inlinable public func decrement() { add(-1) }

    /// Adds `amount` (negative to subtract).
    @inlinable public func add(_ amount: Int64) { current.wrappingAdd(amount, ordering: .relaxed) }

    /// Sets the value.
    @inlinable public func set(_ value: Int64) { current.store(value, ordering: .relaxed) }

    /// The value now.
    public var value: Int64 { current.load(ordering: .relaxed) }
}

/// A gauge's series, one per value of `Labels`.
public final class GaugeFamily<Labels: MetricLabelSet>: Sendable {
    @usableFromInline let table: SeriesTable<Labels, Gauge>

    init(_ table: SeriesTable<Labels, Gauge>) { self.table = table }

    /// The series for `labels`.
    @inlinable public subscript(_ labels: Labels) -> Gauge { table[labels] }
}

extension GaugeFamily {
    /// The series for two labels.
    @inlinable public subscript<First, Second>(_ first: First, _ second: Second) -> Gauge where Labels == LabelPair<First, Second> {
        table[LabelPair(first, second)]
    }
}
