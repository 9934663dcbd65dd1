import PulseHTML
import PulseServerStorage
import PulseSyncAPI

/// `/console/sessions`: every session the principal may see, with its title, room, time (in its own
/// timezone), state, frontier and the devices that hold the frontier's key now.
enum SessionsPage {
    static let page = ConsolePage(path: "sessions", nav: "Sessions", allowed: { !$0.isPresenter }, get: render)

    static func render(_ context: PageContext) throws -> PageResult {
        let sessions = try context.storage.sessions().filter { context.principal.maySee(session: $0.id) }
        return .page(view(sessions, infos: context.console.catalog.infos(storage: context.storage), holders: context.sync.keyHolders))
    }

    /// The page for `sessions` (also the render bench's subject).
    static func view(_ sessions: [SessionRecord], infos: [String: SessionCatalog.Info], holders: KeyHolders) -> PageView {
        let sorted = sessions.sorted { (infos[$0.id]?.startsAt ?? "", $0.id) < (infos[$1.id]?.startsAt ?? "", $1.id) }
        return PageView(title: "Sessions") {
            if sorted.isEmpty {
                p { "No session is imported yet: run pulse-server import with the event's package." }
            } else {
                div(.class("table-wrap")) {
                    table {
                        caption { "\(sorted.count) sessions" }
                        thead {
                            tr {
                                th(.scope("col")) { "Session" }
                                th(.scope("col")) { "Room" }
                                th(.scope("col")) { "Time" }
                                th(.scope("col")) { "State" }
                                th(.scope("col"), .class("num")) { "Frontier" }
                                th(.scope("col"), .class("num")) { "Devices with its key" }
                            }
                        }
                        tbody {
                            for session in sorted {
                                row(session, info: infos[session.id], holders: holders)
                            }
                        }
                    }
                }
            }
        }
    }

    static func row(_ session: SessionRecord, info: SessionCatalog.Info?, holders: KeyHolders) -> Node {
        let clicker = Clicker(session, holders: holders)
        return tr {
            th(.scope("row")) {
                a(.href("/console/sessions/" + session.id)) { bdi { info?.title ?? session.id } }
                br()
                small(.class("muted")) { session.id }
            }
            td { bdi { info?.room ?? "—" } }
            td {
                if let start = info?.startsAt {
                    PulseHTML.time(.datetime(start)) { SessionText.time(info) }
                } else {
                    "—"
                }
            }
            td { span(.class("state state-" + session.state.rawValue)) { SessionText.state(session.state) } }
            td(.class("num")) { session.maxShown.map { "\($0 + 1) of \(session.slideCount)" } ?? "— of \(session.slideCount)" }
            td(.class("num")) { "\(clicker.holding) of \(clicker.devices)" }
        }
    }
}
