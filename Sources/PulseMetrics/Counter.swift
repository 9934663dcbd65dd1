import Synchronization

/// A counter series: a count that only goes up (requests, bytes, refusals). Incrementing is one relaxed
/// atomic add: no lock, no allocation. Keep the handle (`let keysAnswered = requests[.keys, .success]`)
/// where the path is hot; the family's subscript is a dictionary lookup on top.
public final class Counter: Sendable {
    @usableFromInline let count = Atomic<UInt64>(0)

    init() {}

    /// Adds one.
    @inlinable public func increment() { add(1) }

    /// Adds `amount` (wrapping at 2⁶⁴, which a count of events or bytes does not reach).
    @inlinable public func add(_ amount: UInt64) { count.wrappingAdd(amount, ordering: .relaxed) }

    /// The count now.
    public var value: UInt64 { count.load(ordering: .relaxed) }
}

/// A counter's series, one per value of `Labels`.
public final class CounterFamily<Labels: MetricLabelSet>: Sendable {
    @usableFromInline let table: SeriesTable<Labels, Counter>

    init(_ table: SeriesTable<Labels, Counter>) { self.table = table }

    /// The series for `labels`.
    @inlinable public subscript(_ labels: Labels) -> Counter { table[labels] }
}

extension CounterFamily {
    /// The series for two labels: `requests[.keys, .success]`.
    @inlinable public subscript<First, Second>(_ first: First, _ second: Second) -> Counter where Labels == LabelPair<First, Second> {
        table[LabelPair(first, second)]
    }
}
