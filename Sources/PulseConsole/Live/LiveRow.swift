import PulseCore
import PulseServerStorage

/// One row of "Devices in the room", as the page renders it and the stream sends it: name, platform, app
/// build, online, RTT, effective type, last seen (a time, so it never goes stale on the page).
struct LiveRow {
    static let headers = ["Name", "Platform", "App build", "Online", "RTT", "Effective type", "Last seen"]
    /// The columns a phone's narrow screen leaves out (class `wide`, StyleSheet): platform, app build and effective
    /// type; name, online, RTT and last seen stay readable at 390 px without scrolling sideways.
    static let wideOnly: Set<Int> = [1, 2, 5]
    let cells: [String]

    /// The class of column `index`'s cells (the script copies the header's onto the cells it adds).
    static func cellClass(_ index: Int) -> String? { wideOnly.contains(index) ? "wide" : nil }

    init(_ sample: DiagSample, name: String) {
        let connection = sample.connection
        let online: String = switch connection["online"] {
        case .bool(true)?: "online"
        case .bool(false)?: "offline"
        default: "—"
        }
        let rtt = connection["rttMs"]?.intValue.map { "\($0) ms" } ?? "—"
        let type = connection["effectiveType"]?.stringValue ?? "—"
        let seen = String(TimeText.iso(sample.receivedAt).dropFirst(11).prefix(8)) + " UTC"
        cells = [name, sample.platform, sample.build, online, rtt, type, seen]
    }
}
