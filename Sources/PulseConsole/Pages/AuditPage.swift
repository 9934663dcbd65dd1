import PulseCore
import PulseHTML
import PulseSyncAPI

/// `/console/audit?after=<id>`: the audit log (`GET /api/staff/audit`, as the signed-in principal: admins
/// only) as a table of `pageSize` rows, oldest first, with a link to the next page. Every string in it may
/// come from a device or a client: text, in `<bdi>`.
enum AuditPage {
    static let page = ConsolePage(path: "audit", nav: "Audit", allowed: { $0.may(.readAudit) }, get: render)
    static let pageSize = 50

    /// What the page shows: the staff API's answer for one page of entries.
    struct Model {
        let after: Int
        let entries: [JSONValue]
        let next: Int
        let more: Bool
    }

    static func render(_ context: PageContext) throws -> PageResult {
        let after = context.query.text("after").flatMap { BoundedDecimal.parse($0, maxDigits: 18) } ?? 0
        let answer = context.staff(.get, "audit?after=\(after)&limit=\(pageSize)")
        guard answer.ok, let entries = answer.json?["entries"]?.arrayValue else {
            return .page(PageView(title: "Audit", status: answer.ok ? 500 : answer.status, error: answer.message) { p { "The audit log could not be read." } })
        }
        let model = Model(after: after, entries: entries, next: answer.json?["nextAfter"]?.intValue ?? after, more: answer.json?["more"] == .bool(true))
        return .page(view(model))
    }

    static func view(_ model: Model) -> PageView {
        PageView(title: "Audit") {
            p(.class("muted")) { "Every change made through the console, the staff API or the admin command line, oldest first." }
            div(.class("table-wrap")) {
                table {
                    caption { model.after == 0 ? "Audit log, first \(pageSize) entries" : "Audit log, entries after \(model.after)" }
                    thead {
                        tr {
                            for header in ["Id", "Time", "Who", "Action", "Target", "Detail", "Client", "Result"] { th(.scope("col")) { header } }
                        }
                    }
                    tbody {
                        for entry in model.entries {
                            tr {
                                td(.class("num")) { "\(entry["id"]?.intValue ?? 0)" }
                                td { entry["at"]?.stringValue ?? "" }
                                td { bdi { who(entry["actor"]) } }
                                td { code { entry["action"]?.stringValue ?? "" } }
                                td { bdi { entry["target"]?.stringValue ?? "—" } }
                                td { bdi { entry["detail"]?.stringValue ?? "—" } }
                                td { bdi { entry["client"]?.stringValue ?? "—" } }
                                td { bdi { entry["result"]?.stringValue ?? "" } }
                            }
                        }
                    }
                }
            }
            nav(.class("pager"), Attribute("aria-label", "Audit pages")) {
                if model.after > 0 { a(.href("/console/audit")) { "First page" } }
                if model.more { a(.href("/console/audit?after=\(model.next)")) { "Next page" } }
            }
        }
    }

    /// `staff 3f2a… (admin)`, `cli alice`.
    static func who(_ actor: JSONValue?) -> String {
        let kind = actor?["kind"]?.stringValue ?? "?"
        let id = actor?["id"]?.stringValue ?? ""
        return [kind, id].joined(separator: " ") + (actor?["role"]?.stringValue.map { " (\($0))" } ?? "")
    }
}
