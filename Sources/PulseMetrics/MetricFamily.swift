/// A metric's series, one per value of `Labels`, all made when the metric was registered:
/// `requests[.keys, .success]` is the counter of that route and status class. Keep the series where the
/// path is hot; the subscript itself is a few comparisons (`labelIndex`), inlined into the caller.
public final class MetricFamily<Labels: MetricLabelSet, Series: AnyObject & Sendable>: Sendable {
    @usableFromInline let table: SeriesTable<Labels, Series>

    init(_ table: SeriesTable<Labels, Series>) { self.table = table }

    /// The series for `labels`.
    @inlinable public subscript(_ labels: Labels) -> Series { table[labels] }
}

extension MetricFamily {
    /// The series for two labels: `requests[.keys, .success]`.
    @inlinable public subscript<First, Second>(_ first: First, _ second: Second) -> Series where Labels == LabelPair<First, Second> {
        table[LabelPair(first, second)]
    }
}

/// A counter's series, one per value of `Labels`.
public typealias CounterFamily<Labels: MetricLabelSet> = MetricFamily<Labels, Counter>
/// A gauge's series, one per value of `Labels`.
public typealias GaugeFamily<Labels: MetricLabelSet> = MetricFamily<Labels, Gauge>
/// A histogram's series, one per value of `Labels`, all over the same buckets.
public typealias HistogramFamily<Labels: MetricLabelSet> = MetricFamily<Labels, Histogram>
