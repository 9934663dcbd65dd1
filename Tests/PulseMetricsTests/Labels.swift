import PulseMetrics

enum Route: String, MetricLabel {
    static let labelName = "route"
    case keys, manifest, other
}

enum StatusClass: String, MetricLabel {
    static let labelName = "status"
    case success = "2xx", clientError = "4xx", serverError = "5xx"
}

/// Values that need escaping in the exposition.
enum Awkward: String, MetricLabel {
    static let labelName = "reason"
    case quote = "say \"no\"", backslash = "C:\\path", newline = "two\nlines"
}

/// 40 cases: paired with itself, 1,600 series, past the cap.
enum Forty: Int, MetricLabel {
    static let labelName = "n"
    case c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, c19
    case c20, c21, c22, c23, c24, c25, c26, c27, c28, c29, c30, c31, c32, c33, c34, c35, c36, c37, c38, c39
    var labelValue: String { String(rawValue) }
}

enum Le: String, MetricLabel {
    static let labelName = "le"
    case a
}

/// A hand-written label set whose index disagrees with its list: refused at registration.
struct WrongIndex: MetricLabelSet {
    let slot: Int
    static let labelNames = ["slot"]
    static let allLabelSets = [WrongIndex(slot: 0), WrongIndex(slot: 1)]
    var labelValues: [String] { [String(slot)] }
    var labelIndex: Int { 0 }
}

/// A hand-written bounded set done right: four slots.
struct Slot: MetricLabelSet {
    let slot: Int
    static let labelNames = ["slot"]
    static let allLabelSets = (0..<4).map(Slot.init)
    var labelValues: [String] { [String(slot)] }
    var labelIndex: Int { slot }
}
