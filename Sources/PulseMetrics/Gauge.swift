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
