/// The labels of a metric, as a type whose every value is known in advance: a metric has exactly one
/// series per value of `allLabelSets`, made when it is registered, and no other.
///
/// That is what keeps a label from growing without bound: there is no API that takes a label value as
/// a string at the call site, so a device id, a token or an IP address cannot become a series by
/// accident. Declare an enum for each label (`MetricLabel`), pair two with `LabelPair`.
public protocol MetricLabelSet: Hashable, Sendable {
    /// The label names, in the order they are written (`["route", "status"]`).
    static var labelNames: [String] { get }
    /// Every combination; the registry caps a metric at `MetricsRegistry.maximumSeries`.
    static var allLabelSets: [Self] { get }
    /// This combination's values, in the order of `labelNames`.
    var labelValues: [String] { get }
    /// This combination's position in `allLabelSets`: how a metric finds its series without hashing
    /// (checked for every combination when the metric is registered).
    var labelIndex: Int { get }
}

/// One label whose values are the cases of an enum:
///
///     enum Route: String, MetricLabel {
///         static let labelName = "route"
///         case enroll, manifest, keys, time, diag, events, staff, other
///     }
///
/// A `String`-backed enum is its raw values; another type says `labelValue` itself.
public protocol MetricLabel: MetricLabelSet, CaseIterable {
    static var labelName: String { get }
    var labelValue: String { get }
}

extension MetricLabel {
    public static var labelNames: [String] { [labelName] }
    public static var allLabelSets: [Self] { Array(allCases) }
    public var labelValues: [String] { [labelValue] }
    /// The case's position in `allCases`: a few comparisons, inlined where the metric is used.
    @inlinable public var labelIndex: Int { Self.allCases.firstIndex(of: self).map { Self.allCases.distance(from: Self.allCases.startIndex, to: $0) } ?? -1 }
}

extension MetricLabel where Self: RawRepresentable, RawValue == String {
    public var labelValue: String { rawValue }
}

/// A metric without labels: one series.
public struct NoLabels: MetricLabelSet {
    @inlinable public init() {}
    public static let labelNames: [String] = []
    public static let allLabelSets = [NoLabels()]
    public var labelValues: [String] { [] }
    @inlinable public var labelIndex: Int { 0 }
}

/// Two labels, every combination of their cases (`requests[.keys, .success]`).
public struct LabelPair<First: MetricLabel, Second: MetricLabel>: MetricLabelSet {
    public let first: First
    public let second: Second

    @inlinable public init(_ first: First, _ second: Second) {
        self.first = first
        self.second = second
    }

    public static var labelNames: [String] { [First.labelName, Second.labelName] }
    public static var allLabelSets: [Self] { First.allCases.flatMap { first in Second.allCases.map { Self(first, $0) } } }
    public var labelValues: [String] { [first.labelValue, second.labelValue] }
    @inlinable public var labelIndex: Int { first.labelIndex * Second.allCases.count + second.labelIndex }
}
