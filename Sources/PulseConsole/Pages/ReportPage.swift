import PulseCore
import PulseHTML
import PulseHTTPServer
import PulseServerStorage
import PulseStaffAPI
import PulseSyncAPI

/// `/console/sessions/<id>/report`: the end-of-event report (`StaffReport`, the staff API's data) as four
/// server-drawn charts, each with its numbers in a table beside it (devices over time, RTT distribution, app
/// builds, offline share) and the devices' rows; "Download CSV" (`/console/sessions/<id>/report/csv`) is
/// the staff API's CSV, fetched as the signed-in principal. Admins and moderators (of that session).
enum ReportPage {
    static let page = ConsolePage(path: "sessions/*/report", allowed: { $0.may(.readReport) }, get: render)
    static let csvPage = ConsolePage(path: "sessions/*/report/csv", allowed: { $0.may(.readReport) }, get: csv)

    /// Device rows shown on the page at most (the CSV has them all).
    static let maxRows = 200

    static func render(_ context: PageContext) throws -> PageResult {
        let id = context.parameters[0]
        guard context.principal.may(.readReport, session: id), DevicesPage.isSafeId(id), let session = try context.storage.session(id: id) else {
            return .page(PageView(title: "No such session", status: 404) { p { "There is no session with that id." } })
        }
        // The same for every principal who may see it, and the staff API's own report (JSON, CSV): made once per
        // change of the session's samples or state, and while the session is live at most once every few seconds
        // (`ReportCache`, the staff API's); the page is made once per kept report too.
        let reports = context.console.staff.reports
        let kept = try reports.report(of: session, storage: context.storage, now: context.sync.clock())
        return .page(kept.form("console-page") { view(kept.report, liveSeconds: reports.liveSeconds) })
    }

    /// The report page of `report`'s session (the session as the report was made): pure.
    static func view(_ report: StaffReport, liveSeconds: Double) -> PageView {
        let session = report.session
        let id = session.id
        let live = ReportCache.isLive(session.state)
        let charts = [overTime(report), rttDistribution(report), builds(report), offlineShare(report)]
        return PageView(title: "Report: \(id)") {
            p {
                "\(report.rows.count) devices, \(report.sampleCount) samples, state \(session.state.rawValue). "
                a(.href("/console/sessions/\(id)/report/csv"), .class("button"), Attribute("download", "\(id)-report.csv")) { "Download CSV" }
            }
            p(.class("muted"), .id("report-time")) {
                "As of "
                PulseHTML.time(.datetime(TimeText.iso(report.generatedAt))) { String(TimeText.iso(report.generatedAt).dropFirst(11).prefix(8)) + " UTC" }
                live ? ". The session is live: reload for newer figures (made again at most every \(Int(liveSeconds)) seconds)." : "."
            }
            for chart in charts {
                section(.class("report-chart")) {
                    h2 { chart.title }
                    chart.node
                }
            }
            section {
                h2 { "Devices" }
                div(.class("table-wrap")) {
                    table {
                        caption { report.rows.count > maxRows ? "The first \(maxRows) of \(report.rows.count) devices" : "Every device with a sample" }
                        thead {
                            tr {
                                for header in ["Name", "Platform", "App build", "Samples", "Offline samples", "Median RTT", "First seen", "Last seen"] {
                                    th(.scope("col")) { header }
                                }
                            }
                        }
                        tbody {
                            for row in report.rows.prefix(maxRows) {
                                tr {
                                    th(.scope("row")) { bdi { row.name } }
                                    td { bdi { row.platform } }
                                    td { bdi { row.builds.last ?? "" } }
                                    td(.class("num")) { "\(row.samples)" }
                                    td(.class("num")) { "\(row.offline)" }
                                    td(.class("num")) { StaffReport.median(row.rtts).map { "\(Int($0.rounded())) ms" } ?? "—" }
                                    td { PageText.time(row.firstSeen) }
                                    td { PageText.time(row.lastSeen) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Devices with at least one sample in each of the report's equal time slices (`StaffReport.timeline`).
    static func overTime(_ report: StaffReport) -> BarChart {
        let bars = report.timeline.map { BarChart.Bar(label: String(TimeText.iso($0.start).dropFirst(11).prefix(8)), value: $0.devices) }
        return BarChart(
            title: "Devices over time", description: "Devices that posted a sample in each of \(bars.count) equal time slices (UTC start times).",
            labelHeader: "From (UTC)", valueHeader: "Devices", bars: bars)
    }

    /// Devices by the median of their RTT samples.
    static func rttDistribution(_ report: StaffReport) -> BarChart {
        let edges: [(String, Double)] = [("under 50 ms", 50), ("50–99 ms", 100), ("100–199 ms", 200), ("200–499 ms", 500), ("500–999 ms", 1000)]
        var counts = Array(repeating: 0, count: edges.count + 2)
        for row in report.rows {
            guard let median = StaffReport.median(row.rtts) else { counts[edges.count + 1] += 1; continue }
            counts[edges.firstIndex { median < $0.1 } ?? edges.count] += 1
        }
        let labels = edges.map(\.0) + ["1 s or more", "no RTT sent"]
        return BarChart(
            title: "RTT distribution", description: "Devices by the median round-trip time of their samples.",
            labelHeader: "Median RTT", valueHeader: "Devices", bars: zip(labels, counts).map { BarChart.Bar(label: $0, value: $1) })
    }

    /// Devices by the app build of their newest sample: the ten most common, then the rest together.
    static func builds(_ report: StaffReport) -> BarChart {
        var counts: [String: Int] = [:]
        for row in report.rows { counts[row.builds.last ?? "", default: 0] += 1 }
        let sorted = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        var bars = sorted.prefix(10).map { BarChart.Bar(label: $0.key, value: $0.value) }
        let rest = sorted.dropFirst(10).reduce(0) { $0 + $1.value }
        if rest > 0 { bars.append(BarChart.Bar(label: "\(sorted.count - 10) other builds", value: rest)) }
        return BarChart(
            title: "App builds", description: "Devices by the app build of their newest sample.", labelHeader: "App build", valueHeader: "Devices",
            bars: bars)
    }

    /// Samples that said online against those that said offline.
    static func offlineShare(_ report: StaffReport) -> BarChart {
        let offline = report.rows.reduce(0) { $0 + $1.offline }
        let total = report.sampleCount
        let percent = total == 0 ? 0 : (offline * 100 + total / 2) / total
        return BarChart(
            title: "Offline share", description: "\(offline) of \(total) samples (\(percent) %) said the device was offline.",
            labelHeader: "Connection", valueHeader: "Samples",
            bars: [BarChart.Bar(label: "online", value: total - offline), BarChart.Bar(label: "offline (\(percent) %)", value: offline)])
    }

    /// The staff API's CSV of the report, as the signed-in principal (its roles decide).
    static func csv(_ context: PageContext) throws -> PageResult {
        let id = context.parameters[0]
        guard context.principal.may(.readReport, session: id), DevicesPage.isSafeId(id) else {
            return .page(PageView(title: "No such session", status: 404) { p { "There is no session with that id." } })
        }
        let call = HTTPRequest(
            method: .get, target: Array("/api/staff/sessions/\(id)/report?format=csv".utf8), headers: HTTPRequestHeaders(),
            client: context.request.client, body: nil)
        var response = context.console.staffRespond(call, as: context.principal)
        if let deferred = response.deferred {
            guard let answer = deferred.wait(timeout: 30) else { return .refused(status: 503, message: "The report could not be made now.") }
            response = answer
        }
        return .response(response)
    }
}
