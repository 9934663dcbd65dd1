import PulseCore
import PulseHTML
import PulseServerStorage
import PulseSyncAPI

/// `/console/devices?q=…`: every enrolled device with its scope, platform, app build and last sample,
/// searchable; "Revoke" leads to `/console/devices/<id>/revoke`, a confirmation page whose form revokes
/// (no script needed). Device names, platforms and builds are the devices' own: always text, in `<bdi>`.
enum DevicesPage {
    static let page = ConsolePage(path: "devices", nav: "Devices", allowed: { $0.may(.listDevices) }, get: render)
    static let confirmPage = ConsolePage(path: "devices/*/revoke", allowed: { $0.may(.revokeDevice) }, get: confirm, post: revoke)

    /// Rows shown at most; a search narrows the rest.
    static let maxRows = 500
    /// A search is at most this many characters.
    static let maxQuery = 100

    struct Row {
        let device: DeviceRecord
        let latest: DiagSample?
    }

    static func render(_ context: PageContext) throws -> PageResult {
        let fields = FormFields(body: Array(SyncAPI.split(context.request.target).query)) ?? FormFields()
        let query = String((fields.text("q") ?? "").prefix(maxQuery))
        let rows = try Self.rows(context).filter { query.isEmpty || matches($0, query.lowercased()) }
        let shown = rows.prefix(maxRows)
        let canRevoke = context.principal.may(.revokeDevice)
        return .page(PageView(title: "Devices") {
            form(.method("get"), .action("/console/devices"), Attribute("role", "search")) {
                div(.class("field")) {
                    label(.for("q")) { "Search devices" }
                    input(.type("search"), .id("q"), .name("q"), .value(query), Attribute("maxlength", "\(maxQuery)"))
                }
                button(.type("submit"), .class("secondary")) { "Search" }
            }
            p(.class("muted"), Attribute("aria-live", "polite")) {
                if rows.count > shown.count {
                    "Showing \(shown.count) of \(rows.count) devices: search to narrow."
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
                            th(.scope("col")) { "Name" }
                            th(.scope("col")) { "Scope" }
                            th(.scope("col")) { "Platform" }
                            th(.scope("col")) { "App build" }
                            th(.scope("col")) { "Last seen" }
                            th(.scope("col")) { "Status" }
                            th(.scope("col")) { "Actions" }
                        }
                    }
                    tbody {
                        for row in shown {
                            tr {
                                th(.scope("row")) { bdi { row.device.name } }
                                td { bdi { PageText.scope(row.device.scope) } }
                                td { bdi { row.latest?.platform ?? row.device.platform } }
                                td { bdi { row.latest?.build ?? "—" } }
                                td { row.latest.map { PageText.ago($0.receivedAt, now: context.now) } ?? "never" }
                                td { row.device.isRevoked ? "revoked" : "active" }
                                td(.class("actions")) {
                                    if !row.device.isRevoked, canRevoke, isSafeId(row.device.id) {
                                        a(.href("/console/devices/\(row.device.id)/revoke"), .class("button danger")) { "Revoke" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        })
    }

    /// Every device, newest enrolment first, with its newest sample of any session.
    static func rows(_ context: PageContext) throws -> [Row] {
        var latest: [String: DiagSample] = [:]
        for session in try context.storage.sessions() {
            for sample in try context.storage.latestSamples(sessionId: session.id, since: 0)
            where (latest[sample.deviceId]?.receivedAt ?? .min) < sample.receivedAt {
                latest[sample.deviceId] = sample
            }
        }
        return try context.storage.devices().sorted { $0.enrolledAt > $1.enrolledAt }.map { Row(device: $0, latest: latest[$0.id]) }
    }

    static func matches(_ row: Row, _ query: String) -> Bool {
        [row.device.name, row.device.platform, row.device.id, row.device.scope.id, row.latest?.build ?? ""]
            .contains { $0.lowercased().contains(query) }
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
        guard isSafeId(id), let device = try context.storage.device(id: id) else {
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

    static func revoke(_ context: PageContext, _ form: FormFields) throws -> PageResult {
        let id = context.parameters[0]
        guard isSafeId(id), try context.storage.device(id: id) != nil else { return .refused(status: 404, message: "There is no such device.") }
        let answer = context.staff(.post, "devices/\(id)/revoke")
        guard answer.ok else { return .refused(status: answer.status, message: answer.message) }
        return .redirect("/console/devices", notice: "The device was revoked.")
    }
}
