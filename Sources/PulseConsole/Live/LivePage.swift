import PulseCore
import PulseHTML
import PulseHTTPServer
import PulseServerStorage
import PulseSyncAPI

/// The live view (issue 18): `/console/live` lists the sessions, `/console/sessions/<id>/live` is the table
/// "Devices in the room" of one, updated without a reload by `LiveFeed`'s `devices` events (changed rows
/// only) within a tick of a device's diag sample, with the count of open event streams. Admins and
/// moderators (of that session).
enum LivePage {
    static let indexPage = ConsolePage(path: "live", nav: "Live view", allowed: { $0.may(.readLiveDevices) }, get: index)
    static let page = ConsolePage(path: "sessions/*/live", allowed: { $0.may(.readLiveDevices) }, get: render)
    static let eventsPage = ConsolePage(path: "sessions/*/live/events", allowed: { $0.may(.readLiveDevices) }, get: events)
    /// Rows in the table at most, the most recently seen first (the script adds no more than this either): a
    /// room of 10,000 is a count and the report, not a table to read.
    static let maxRows = 200

    static func index(_ context: PageContext) throws -> PageResult {
        let sessions = try context.storage.sessions().filter { context.principal.maySee(session: $0.id) }
        let infos = context.console.catalog.infos(storage: context.storage)
        return .page(PageView(title: "Live view") {
            ul {
                for session in sessions where DevicesPage.isSafeId(session.id) {
                    let title = infos[session.id]?.title ?? session.id
                    li {
                        a(.href("/console/sessions/\(session.id)/live")) { bdi { title } }
                        if context.principal.may(.readReport, session: session.id) {
                            " · "
                            // "Report" alone, once per session, would be one name for many links to a screen reader.
                            a(.href("/console/sessions/\(session.id)/report"), Attribute("aria-label", "Report of \(title)")) { "Report" }
                        }
                    }
                }
            }
        })
    }

    static func render(_ context: PageContext) throws -> PageResult {
        let id = context.parameters[0]
        guard context.principal.may(.readLiveDevices, session: id), DevicesPage.isSafeId(id), try context.storage.session(id: id) != nil else {
            return .page(PageView(title: "No such session", status: 404) { p { "There is no session with that id." } })
        }
        let window = context.sync.configuration.liveWindow
        // The newest rows and the room's count from the database, and the names of those rows only: a room
        // of 10,000 costs the page what a room of 200 does (Scripts/bench/console).
        let latest = try context.storage.latestSamples(sessionId: id, since: context.now - window, limit: maxRows)
        let samples = latest.samples.filter { DevicesPage.isSafeId($0.deviceId) }
        let names = Dictionary(try context.storage.devices(ids: samples.map(\.deviceId)).map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let rows = samples.map { sample in (sample.deviceId, LiveRow(sample, name: names[sample.deviceId] ?? "")) }
        let streams = context.sync.hub.streamCount(session: id)
        let title = context.console.catalog.infos(storage: context.storage)[id]?.title ?? id
        return .page(view(session: id, title: title, rows: rows, total: latest.devices, streams: streams, window: window, now: context.now))
    }

    /// The page of session `id` (called `title`) with `rows` (device id, row): pure, so the bench renders it
    /// without storage.
    static func view(session id: String, title: String, rows: [(String, LiveRow)], total: Int, streams: Int, window: Int64, now: Int64) -> PageView {
        PageView(title: "Live view: \(title)", events: "/console/sessions/\(id)/live/events?since=\(now)") {
            p {
                "Open event streams: "
                strong(.id("live-streams")) { "\(streams)" }
                " · "
                a(.href("/console/sessions/\(id)/report")) { "Report" }
            }
            p(.id("live-announce"), .class("muted"), Attribute("aria-live", "polite")) {
                "Devices with a sample in the last \(window) seconds; new samples appear here as they arrive."
            }
            if total > rows.count {
                p(.class("muted")) { "Showing the \(rows.count) most recently seen of \(total) devices; the report has them all." }
            }
            div(.class("table-wrap")) {
                table(.id("live-table")) {
                    caption { "Devices in the room" }
                    thead {
                        tr {
                            for (index, header) in LiveRow.headers.enumerated() {
                                th(.scope("col"), LiveRow.cellClass(index).map { .class($0) } ?? .none) { header }
                            }
                        }
                    }
                    tbody(.id("live-rows"), Attribute("data-max-rows", "\(maxRows)")) {
                        for (deviceId, row) in rows {
                            tr(.id("device-" + deviceId)) {
                                th(.scope("row")) { bdi { row.cells[0] } }
                                td(.class("wide")) { bdi { row.cells[1] } }
                                td(.class("wide")) { bdi { row.cells[2] } }
                                for (index, cell) in row.cells.enumerated().dropFirst(3) {
                                    td(LiveRow.cellClass(index).map { .class($0) } ?? .none) { cell }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    static func events(_ context: PageContext) throws -> PageResult {
        let id = context.parameters[0]
        guard context.principal.may(.readLiveDevices, session: id), DevicesPage.isSafeId(id), try context.storage.session(id: id) != nil else {
            return .response(HTTPResponse(status: 404, headers: [], body: .bytes([]), note: "console:no-session"))
        }
        let query = FormFields(body: Array(SyncAPI.split(context.request.target).query)) ?? FormFields()
        // The page's render time, at most one live window back (so a stale tab cannot ask for everything).
        let window = context.sync.configuration.liveWindow
        let since = query.text("since").flatMap { BoundedDecimal.parse($0, maxDigits: 12) }.map { Int64($0) } ?? context.now
        let stream = try context.console.liveFeed.open(
            session: id, since: max(since, context.now - window), consoleSession: context.sessionId, tokenHash: context.tokenHash)
        return .response(HTTPResponse(status: 200, headers: ConsoleStreamLimits.headers, body: .stream(stream), note: "console:live-events"))
    }
}
