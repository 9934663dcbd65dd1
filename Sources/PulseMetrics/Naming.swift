/// The Prometheus naming rules a metric is checked against when it is registered.
enum Naming {
    /// Parts of a name that say it is not in a base unit (seconds, bytes, ratios).
    static let nonBaseUnits: Set<Substring> = [
        "milliseconds", "millis", "ms", "microseconds", "micros", "us", "nanoseconds", "nanos", "ns", "minutes", "hours", "days",
        "kilobytes", "megabytes", "gigabytes", "kb", "mb", "gb", "kib", "mib", "gib", "bits", "percent", "percentage",
    ]
    static let reservedLabels: Set<String> = ["le", "quantile"]

    static func check(_ name: String, help: String, kind: Exposition.Kind, labels: [String], series: Int) {
        precondition(!help.isEmpty, "PulseMetrics: \(name) needs a help text")
        precondition(isName(name), "PulseMetrics: \(name) is not a metric name ([a-zA-Z_][a-zA-Z0-9_]*)")
        let endsInTotal = name.hasSuffix("_total")
        precondition(kind != .counter || endsInTotal, "PulseMetrics: counter \(name) must end in _total")
        precondition(kind == .counter || !endsInTotal, "PulseMetrics: \(name) ends in _total but is a \(kind.rawValue)")
        for suffix in ["_bucket", "_sum", "_count"] {
            precondition(!name.hasSuffix(suffix), "PulseMetrics: \(name) ends in \(suffix), which histograms write")
        }
        let parts = name.lowercased().split(separator: "_")
        if let unit = parts.first(where: nonBaseUnits.contains) {
            preconditionFailure("PulseMetrics: \(name) is in \(unit): use base units (_seconds, _bytes, a 0…1 _ratio)")
        }
        precondition(Set(labels).count == labels.count, "PulseMetrics: \(name) has a label name twice: \(labels)")
        for label in labels {
            precondition(isName(label) && !label.hasPrefix("__"), "PulseMetrics: \(name): \(label) is not a label name")
            precondition(!reservedLabels.contains(label), "PulseMetrics: \(name): the label \(label) is reserved (histogram buckets, summary quantiles)")
        }
        precondition(series >= 1 && series <= MetricsRegistry.maximumSeries, "PulseMetrics: \(name) would have \(series) series (1…\(MetricsRegistry.maximumSeries))")
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`: the colon is left to recording rules, as Prometheus asks of instrumentation.
    static func isName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !isDigit(first) else { return false }
        return name.utf8.allSatisfy { byte in isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "_") }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
