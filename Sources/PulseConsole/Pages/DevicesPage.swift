import PulseCore
import PulseHTML
import PulseHTTPServer
import PulseServerStorage
import PulseSyncAPI

/// `/console/devices?q=…`: every enrolled device with its scope, platform, app build and last sample,
/// searchable; "Revoke" leads to `/console/devices/<id>/revoke`, a confirmation page whose form revokes
/// (no script needed). Device names, platforms and builds are the devices' own: always text, in `<bdi>`.
enum DevicesPage {
    static let page = ConsolePage(path: "devices", nav: "Devices", allowed: { $0.may(.listDevices) }, get: render)
    static let confirmPage = ConsolePage(path: "devices/*/revoke", allowed: { $0.may(.revokeDevice) }, get: confirm, post: revoke)

    /// Rows on one page; "Next" and "Previous" links page through the rest, a search narrows them.
    static let pageSize = 100
    /// A search is at most this many characters.
    static let maxQuery = 100

    struct Row {
        let device: DeviceRecord
        let latest: DiagSample?
    }

    /// What the page shows, read once: the view is a pure function of it.
    struct Model {
        let query: String
        let from: Int
        let rows: [Row]
        let total: Int
        let canRevoke: Bool
        let now: Int64
    }

    static func render(_ context: PageContext) throws -> PageResult {
        .page(view(try model(context)))
    }

    static func model(_ context: PageContext) throws -> Model {
        let fields = context.query
        let query = String((fields.text("q") ?? "").prefix(maxQuery))
        let from = Pager.from(fields)
        let (rows, total) = try Self.rows(context, matching: query.lowercased(), from: from)
        return Model(query: query, from: from, rows: rows, total: total, canRevoke: context.principal.may(.revokeDevice), now: context.now)
    }

    static func view(_ model: Model) -> PageView {
        let (query, rows, total, from) = (model.query, model.rows, model.total, model.from)
        return PageView(title: "Devices") {
            form(.method("get"), .action("/console/devices"), Attribute("role", "search")) {
                div(.class("field")) {
                    label(.for("q")) { "Search devices" }
                    input(.type("search"), .id("q"), .name("q"), .value(query), Attribute("maxlength", "\(maxQuery)"))
                }
                button(.type("submit"), .class("secondary")) { "Search" }
            }
            p(.class("muted"), Attribute("aria-live", "polite")) {
                if total > rows.count {
                    rows.isEmpty ? "No device on this page: \(total) in all." : "Devices \(from + 1)–\(from + rows.count) of \(total)."
                } else if rows.isEmpty {
                    query.isEmpty ? "No device is enrolled yet." : "No device matches the search."
                } else {
                    rows.count == 1 ? "1 device" : "\(rows.count) devices"
                }
            }
            div(.class("table-wrap")) {
                table {
                    caption { query.isEmpty ? "Enrolled devices" : "Devices matching the search" }
                    thead {
                        tr {
                            for header in ["Name", "Scope", "Platform", "App build", "Last seen", "Status", "Actions"] { th(.scope("col")) { header } }
                        }
                    }
                    tbody {
                        for row in rows { self.row(row, canRevoke: model.canRevoke, now: model.now) }
                    }
                }
            }
            Pager(
                path: "/console/devices", query: query.isEmpty ? "" : "q=\(FormDecoding.encoded(query))&", from: from, shown: rows.count, total: total,
                size: pageSize, label: "Device pages"
            ).node
        }
    }

    static func row(_ row: Row, canRevoke: Bool, now: Int64) -> Node {
        tr {
            th(.scope("row")) { bdi { row.device.name } }
            td { bdi { PageText.scope(row.device.scope) } }
            td { bdi { row.latest?.platform ?? row.device.platform } }
            td { bdi { row.latest?.build ?? "—" } }
            td { row.latest.map { PageText.ago($0.receivedAt, now: now) } ?? "never" }
            td { row.device.isRevoked ? "revoked" : "active" }
            td(.class("row-actions")) {
                if !row.device.isRevoked, canRevoke, isSafeId(row.device.id) {
                    // One name per row for a screen reader's list of links: "Revoke" alone, 100 times, says nothing.
                    a(.href("/console/devices/\(row.device.id)/revoke"), .class("button danger"),
                      Attribute("aria-label", "Revoke \(row.device.name.isEmpty ? "device " + row.device.id : row.device.name)")) { "Revoke" }
                }
            }
        }
    }

    /// One page of the devices that match `search` (lowercased) and that the principal may see (the staff
    /// API's own rule, `StaffAPI.deviceScopes(visibleTo:)`: a token scoped to a session sees that session's
    /// devices and its series'), newest enrolment first, each with its newest sample of any session, and how
    /// many match: two short queries, whatever the number of devices.
    static func rows(_ context: PageContext, matching search: String, from: Int) throws -> (rows: [Row], total: Int) {
        let scopes = try context.console.staff.deviceScopes(visibleTo: context.principal.staff)
        let page = try context.storage.devices(matching: search, scopes: scopes, offset: from, limit: pageSize)
        let latest = try context.storage.latestSamples(deviceIds: page.devices.map(\.id))
        return (page.devices.map { Row(device: $0, latest: latest[$0.id]) }, page.total)
    }

    /// A device id as the server makes them (letters, digits, `-`, `_`), so it may go into a path.
    static func isSafeId(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && id.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
        }
    }

    // MARK: The confirmation

    static func confirm(_ context: PageContext) throws -> PageResult {
        let id = context.parameters[0]
        guard isSafeId(id), let device = try context.storage.device(id: id), try isVisible(device, to: context) else {
            return .page(PageView(title: "No such device", status: 404) { p { "There is no device with that id." } })
        }
        return .page(PageView(title: "Revoke this device?") {
            dl(.class("rules")) {
                dt { "Name" }
                dd { bdi { device.name } }
                dt { "Scope" }
                dd { bdi { PageText.scope(device.scope) } }
                dt { "Enrolled" }
                dd { PageText.time(device.enrolledAt) }
            }
            if device.isRevoked {
                p { "This device is revoked already." }
            } else {
                p { "Its certificate stops working at once: it gets no more keys, manifests or events. This cannot be undone." }
                context.form(action: "/console/devices/\(id)/revoke") {
                    button(.type("submit"), .class("danger")) { "Revoke device" }
                }
            }
            p { a(.href("/console/devices")) { "Back to the devices" } }
        })
    }

    /// Whether the principal may see `device` (the devices list's rule): a device it may not list is "no such
    /// device" on the confirmation too.
    static func isVisible(_ device: DeviceRecord, to context: PageContext) throws -> Bool {
        try context.console.staff.deviceScopes(visibleTo: context.principal.staff).map { $0.contains(device.scope) } ?? true
    }

    static func revoke(_ context: PageContext, _ form: FormFields) throws -> PageResult {
        let id = context.parameters[0]
        guard isSafeId(id), let device = try context.storage.device(id: id), try isVisible(device, to: context) else {
            return .refused(status: 404, message: "There is no such device.")
        }
        let answer = context.staff(.post, "devices/\(id)/revoke")
        guard answer.ok else { return .refused(status: answer.status, message: answer.message) }
        return .redirect("/console/devices", notice: "The device was revoked.")
    }
}
