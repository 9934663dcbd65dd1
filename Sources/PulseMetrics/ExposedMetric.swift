/// A registered metric, as the exposition sees it.
protocol ExposedMetric: Sendable {
    var name: String { get }
    func expose(into writer: inout Exposition)
}

/// A counter's or gauge's series: one sample line each.
struct SeriesExposure<Labels: MetricLabelSet, Series: AnyObject & Sendable>: ExposedMetric {
    let name: String
    let help: String
    let kind: Exposition.Kind
    let family: MetricFamily<Labels, Series>
    let value: @Sendable (Series) -> Exposition.Value

    func expose(into writer: inout Exposition) {
        writer.header(name, help: help, kind: kind)
        for (series, labels) in zip(family.table.series, family.table.labelText) {
            writer.sample(name, labels: labels, value: value(series))
        }
    }
}

struct HistogramExposure<Labels: MetricLabelSet>: ExposedMetric {
    let name: String
    let help: String
    let family: HistogramFamily<Labels>
    /// `le="0.005"` … `le="+Inf"`, rendered once.
    let bounds: [[UInt8]]

    init(name: String, help: String, family: HistogramFamily<Labels>) {
        self.name = name
        self.help = help
        self.family = family
        let upperBounds = family.table.series.first?.upperBounds ?? []
        bounds = (upperBounds.map(Exposition.format) + ["+Inf"]).map { Exposition.labelText(names: ["le"], values: [$0]) }
    }

    func expose(into writer: inout Exposition) {
        writer.header(name, help: help, kind: .histogram)
        for (series, labels) in zip(family.table.series, family.table.labelText) {
            let (cumulative, count, sum) = series.snapshot
            for (bound, total) in zip(bounds, cumulative) {
                writer.sample(name, suffix: "_bucket", labels: labels, extra: bound, value: .integer(total))
            }
            writer.sample(name, suffix: "_sum", labels: labels, value: .double(sum))
            writer.sample(name, suffix: "_count", labels: labels, value: .integer(count))
        }
    }
}

/// A counter or gauge whose values are read when scraped; `read` gives one value per `labelText`.
struct ReadingExposure: ExposedMetric {
    let name: String
    let help: String
    let kind: Exposition.Kind
    var labelText: [[UInt8]] = [[]]
    let read: @Sendable () -> [Double]

    func expose(into writer: inout Exposition) {
        let values = read()
        // A reading that failed (a /proc file missing) leaves the metric out rather than writing a guess.
        guard values.count == labelText.count, !values.contains(where: \.isNaN) else { return }
        writer.header(name, help: help, kind: kind)
        for (labels, value) in zip(labelText, values) { writer.sample(name, labels: labels, value: .double(value)) }
    }
}
