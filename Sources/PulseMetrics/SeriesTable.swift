/// A metric's series, one per value of `Labels`, made at registration, with each one's label text
/// rendered once (`route="keys",status="2xx"`) for the exposition.
@usableFromInline
struct SeriesTable<Labels: MetricLabelSet, Series: AnyObject & Sendable>: Sendable {
    let labelSets: [Labels]
    @usableFromInline let series: [Series]
    /// `name="value",…` of each series, escaped, without braces; empty without labels.
    let labelText: [[UInt8]]
    /// Where a `Labels` value outside `allLabelSets` counts: never exposed. (A hand-written
    /// `MetricLabelSet` can make one; a debug build stops there.)
    @usableFromInline let unlisted: Series

    init(_ make: () -> Series) {
        labelSets = Labels.allLabelSets
        series = labelSets.map { _ in make() }
        labelText = labelSets.map { Exposition.labelText(names: Labels.labelNames, values: $0.labelValues) }
        for (position, labels) in labelSets.enumerated() {
            precondition(labels.labelIndex == position, "PulseMetrics: \(Labels.self).labelIndex of \(labels) is \(labels.labelIndex), not its position \(position)")
        }
        unlisted = make()
    }

    /// Inlined where it is used, so finding the series is a few comparisons specialised for the caller's
    /// label type (a dictionary lookup through witness tables took about 500 ns).
    @inlinable subscript(_ labels: Labels) -> Series {
        let position = labels.labelIndex
        guard position >= 0, position < series.count else {
            assertionFailure("PulseMetrics: \(labels) is not one of \(Labels.self).allLabelSets")
            return unlisted
        }
        return series[position]
    }
}
