import PulseCore
import PulseHTML
import PulseServerStorage
import PulseStaffAPI

/// `/console/companion`: "Companion app devices" (contract §1). Mints device codes and attendee links,
/// shows each secret once (text and QR code of its enrollment link, docs/console.md), lists codes and links
/// by id only, `pageSize` to a page, revokes them; an attendee link also with every device it enrolled
/// ("Revoke with its devices": a leaked link's phones are cut at once). Admins only.
///
/// What a render costs does not grow with the event: the scope menus are the catalog's (`SessionCatalog.Choices`,
/// made once per import), the list is one page, and "enrolled in the last minute" adds up a few 10-second
/// buckets per credential (`recentEnrollments`), not the devices of an enrollment wave.
enum CompanionDevicesPage {
    static let page = ConsolePage(path: "companion", nav: "Companion app devices", allowed: { $0.may(.listTokens) }, get: render, post: act)

    /// The expiry choices of both forms: label and seconds.
    static let expiries: [(label: String, seconds: Int64)] = [
        ("1 hour", 3600), ("8 hours", 8 * 3600), ("1 day", 86_400), ("3 days", 3 * 86_400), ("7 days", 7 * 86_400),
    ]
    /// Codes and links on one page of the list.
    static let pageSize = 50
    static let kinds: [CredentialKind] = [.deviceCode, .registrationToken]

    /// Everything the page shows, read once: the view is a pure function of it.
    struct Model {
        struct Row {
            let record: CredentialRecord
            let status: String
            let recent: Int
        }

        let forms: Forms
        var minted: Node?
        let mayMintCode: Bool
        let mayMintLink: Bool
        let mayRevoke: Bool
        let choices: SessionCatalog.Choices
        let rows: [Row]
        let total: Int
        let from: Int
    }

    static func render(_ context: PageContext) throws -> PageResult {
        .page(view(try model(context, from: Pager.from(context.query))))
    }

    static func model(_ context: PageContext, from: Int, minted: Node? = nil) throws -> Model {
        let listed = try context.storage.credentials(kinds: kinds, offset: from, limit: pageSize)
        let recent = try context.storage.recentEnrollments(since: context.now - 60)
        let principal = context.principal
        return Model(
            forms: context.forms, minted: minted, mayMintCode: principal.may(.mintDeviceCode), mayMintLink: principal.may(.mintRegistrationToken),
            mayRevoke: principal.may(.revokeToken), choices: context.console.catalog.choices(storage: context.storage),
            rows: listed.credentials.map { Model.Row(record: $0, status: StaffJSON.status($0, now: context.now), recent: recent[$0.id] ?? 0) },
            total: listed.total, from: from)
    }

    static func view(_ model: Model) -> PageView {
        PageView(title: "Companion app devices") {
            if let minted = model.minted { minted }
            if model.mayMintCode {
                section(Attribute("aria-labelledby", "new-code")) {
                    h2(.id("new-code")) { "New device code" }
                    p(.class("muted")) { "A code enrolls one phone, once. It is shown once: copy it or let the phone scan it." }
                    model.forms.form(action: "/console/companion") {
                        input(.type("hidden"), .name("do"), .value("code"))
                        div(.class("field")) {
                            label(.for("code-scope")) { "Session or series" }
                            select(.id("code-scope"), .name("scope"), .required()) { model.choices.scopeOptions }
                        }
                        expiryField(id: "code-expiry", default: 86_400)
                        button(.type("submit")) { "New device code" }
                    }
                }
            }
            if model.mayMintLink {
                section(Attribute("aria-labelledby", "new-link")) {
                    h2(.id("new-link")) { "New attendee link" }
                    p(.class("muted")) { "A link enrolls attendees' phones for a series, up to its device cap. It is shown once." }
                    model.forms.form(action: "/console/companion") {
                        input(.type("hidden"), .name("do"), .value("link"))
                        div(.class("field")) {
                            label(.for("link-series")) { "Series" }
                            select(.id("link-series"), .name("series"), .required()) { model.choices.seriesOptions }
                        }
                        div(.class("field")) {
                            label(.for("link-cap")) { "Device cap" }
                            input(.type("number"), .id("link-cap"), .name("cap"), Attribute("min", "1"), Attribute("max", "10000000"), Attribute("inputmode", "numeric"))
                        }
                        expiryField(id: "link-expiry", default: 3 * 86_400)
                        button(.type("submit")) { "New attendee link" }
                    }
                }
            }
            section(Attribute("aria-labelledby", "codes")) {
                h2(.id("codes")) { "Codes and links" }
                div(.class("table-wrap")) {
                    table {
                        caption {
                            model.total > model.rows.count && !model.rows.isEmpty
                                ? "Codes and links \(model.from + 1)–\(model.from + model.rows.count) of \(model.total)" : "Codes and links (\(model.total))"
                        }
                        thead {
                            tr {
                                th(.scope("col")) { "Id" }
                                th(.scope("col")) { "Kind" }
                                th(.scope("col")) { "Scope" }
                                th(.scope("col")) { "Status" }
                                th(.scope("col"), .class("num")) { "Devices enrolled" }
                                th(.scope("col"), .class("num")) { "Enrolled in the last minute" }
                                th(.scope("col")) { "Actions" }
                            }
                        }
                        tbody {
                            for row in model.rows { self.row(row, model) }
                        }
                    }
                }
                Pager(path: "/console/companion", from: model.from, shown: model.rows.count, total: model.total, size: pageSize, label: "Pages of codes and links").node
            }
        }
    }

    static func row(_ row: Model.Row, _ model: Model) -> Node {
        let record = row.record
        return tr {
            td { code { record.id } }
            td { record.kind == .deviceCode ? "Device code" : "Attendee link" }
            td { bdi { PageText.scope(record.scope) } }
            td { span(.class("state state-\(row.status)")) { row.status } }
            td(.class("num")) { "\(record.devicesEnrolled)" + (record.maxDevices.map { " of \($0)" } ?? "") }
            td(.class("num")) { "\(row.recent)" }
            td(.class("row-actions")) {
                if record.revokedAt == nil, model.mayRevoke {
                    model.forms.form(action: "/console/companion", confirm: "Revoke \(record.id)? Phones it enrolled keep working.") {
                        input(.type("hidden"), .name("do"), .value("revoke"))
                        input(.type("hidden"), .name("id"), .value(record.id))
                        button(.type("submit"), .class("danger"), Attribute("aria-label", "Revoke \(record.id)")) { "Revoke" }
                    }
                }
                // A leaked attendee link: the link and every phone it enrolled, at once (also for a link revoked
                // before, whose phones still work).
                if record.kind == .registrationToken, model.mayRevoke, record.revokedAt == nil || record.devicesEnrolled > 0 {
                    revokeWithDevicesForm(record, forms: model.forms, confirmed: false)
                }
            }
        }
    }

    /// "Revoke with its devices" for the attendee link `record`. It cuts every phone the link enrolled, so it asks
    /// first: with the script, `data-confirm` asks and sets `confirmed`; without it, the post answers with
    /// `confirmation` (the same form, `confirmed` set). `confirmed`: the form of that page.
    static func revokeWithDevicesForm(_ record: CredentialRecord, forms: Forms, confirmed: Bool) -> Node {
        forms.form(action: "/console/companion", confirm: confirmed ? nil : confirmQuestion(record)) {
            input(.type("hidden"), .name("do"), .value("revoke-devices"))
            input(.type("hidden"), .name("id"), .value(record.id))
            input(.type("hidden"), .name("confirmed"), .value(confirmed ? "yes" : ""))
            button(.type("submit"), .class("danger"), Attribute("aria-label", "Revoke \(record.id) with its devices")) { "Revoke with its devices" }
        }
    }

    static func confirmQuestion(_ record: CredentialRecord) -> String {
        "Revoke attendee link \(record.id) and every device it enrolled (\(record.devicesEnrolled))? "
            + "Those phones stop getting slide keys at once, and cannot be restored."
    }

    /// The confirmation of "Revoke with its devices" without the script.
    static func confirmation(_ record: CredentialRecord, forms: Forms) -> PageView {
        PageView(title: "Revoke attendee link \(record.id) with its devices") {
            p {
                "This revokes the attendee link "
                code { record.id }
                " (\(PageText.scope(record.scope))) and every device it enrolled: \(record.devicesEnrolled) so far. "
                "Those phones stop getting slide keys at once and cannot be restored; attendees enroll again with a new link."
            }
            p(.class("actions")) {
                revokeWithDevicesForm(record, forms: forms, confirmed: true)
                a(.href("/console/companion")) { "Cancel" }
            }
        }
    }

    static func expiryField(id: String, default seconds: Int64) -> Node {
        div(.class("field")) {
            label(.for(id)) { "Expires after" }
            select(.id(id), .name("expires")) {
                for choice in expiries { option(.value("\(choice.seconds)"), .selected(choice.seconds == seconds)) { choice.label } }
            }
        }
    }

    // MARK: Actions

    /// Mints and revokes through the staff API as the signed-in principal (its roles, checks and audit log).
    static func act(_ context: PageContext, _ form: FormFields) throws -> PageResult {
        let choices = context.console.catalog.choices(storage: context.storage)
        switch form["do"] {
        case "code":
            guard let scope = scope(form.text("scope")), scopeExists(scope, choices) else {
                return .refused(status: 400, message: "Choose a session or series from the list.")
            }
            guard let lifetime = expiry(form) else { return .refused(status: 400, message: "Choose one of the listed expiry times.") }
            return minted(context, context.staff(.post, "device-codes", [scope.kind: .string(scope.id), "expires": .int(Int(lifetime))]))
        case "link":
            guard let series = form.text("series"), choices.series.contains(series) else {
                return .refused(status: 400, message: "Choose a series from the list.")
            }
            var body: [String: JSONValue] = ["series": .string(series)]
            if let text = form.text("cap") {
                guard let value = BoundedDecimal.parse(text, maxDigits: 8), (1...10_000_000).contains(value) else {
                    return .refused(status: 400, message: "The device cap must be a whole number from 1 to 10,000,000, or empty for none.")
                }
                body["maxDevices"] = .int(value)
            }
            guard let lifetime = expiry(form) else { return .refused(status: 400, message: "Choose one of the listed expiry times.") }
            body["expires"] = .int(Int(lifetime))
            return minted(context, context.staff(.post, "registration-tokens", .object(body)))
        case "revoke":
            guard let id = form.text("id"), isListingId(id),
                  let record = try context.storage.credentials().first(where: { $0.id == id }), record.kind != .staffToken
            else { return .refused(status: 404, message: "There is no such code or link.") }
            let answer = context.staff(.post, "tokens/revoke", ["token": .string(id)])
            guard answer.ok else { return .refused(status: answer.status, message: answer.message) }
            return .redirect("/console/companion", notice: "Revoked \(id).")
        case "revoke-devices":
            // Asked of admins only: the confirmation page is not shown to a token that may not revoke.
            guard context.principal.may(.revokeToken) else { return .refused(status: 403, message: StaffAnswer(status: 403, json: nil).message) }
            guard let id = form.text("id"), isListingId(id),
                  let record = try context.storage.credentials().first(where: { $0.id == id }), record.kind == .registrationToken
            else { return .refused(status: 404, message: "There is no such attendee link.") }
            guard form["confirmed"] == "yes" else { return .page(confirmation(record, forms: context.forms)) }
            let answer = context.staff(.post, "tokens/revoke", ["token": .string(id), "withDevices": true])
            guard answer.ok else { return .refused(status: answer.status, message: answer.message) }
            let devices = answer.json?["devicesRevoked"]?.intValue ?? 0
            return .redirect("/console/companion", notice: "Revoked \(id) and the \(devices == 1 ? "device" : "\(devices) devices") it enrolled.")
        default:
            return .refused(status: 400, message: "The form could not be read.")
        }
    }

    /// A credential's listing id: 12 lowercase hex digits.
    static func isListingId(_ id: String) -> Bool {
        id.utf8.count == 12 && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The page with what the staff API minted, once; its refusal as the page's error line.
    static func minted(_ context: PageContext, _ answer: StaffAnswer) -> PageResult {
        guard answer.ok, let json = answer.json, let secret = json["secret"]?.stringValue, let id = json["id"]?.stringValue else {
            return .refused(status: answer.ok ? 500 : answer.status, message: answer.message)
        }
        let view = MintedView(
            kind: json["kind"]?.stringValue == "device-code" ? .deviceCode : .registrationToken, secret: secret, id: id,
            scope: json["scope"].flatMap { DeviceScope(kind: $0["kind"]?.stringValue ?? "", id: $0["id"]?.stringValue ?? "") },
            expires: json["expiresAt"]?.stringValue, server: context.enrollmentServer)
        do { return .page(Self.view(try model(context, from: 0, minted: view.node))) } catch {
            return .refused(status: 503, message: "The list could not be read now.")
        }
    }

    static func scope(_ text: String?) -> DeviceScope? {
        guard let text, text.utf8.count <= 200, let colon = text.firstIndex(of: ":") else { return nil }
        return DeviceScope(kind: String(text[..<colon]), id: String(text[text.index(after: colon)...]))
    }

    static func scopeExists(_ scope: DeviceScope, _ choices: SessionCatalog.Choices) -> Bool {
        switch scope {
        case let .session(id): choices.sessions.contains(id)
        case let .series(id): choices.series.contains(id)
        }
    }

    /// The chosen expiry in seconds: one of `expiries`, else nil.
    static func expiry(_ form: FormFields) -> Int64? {
        guard let text = form.text("expires"), let value = BoundedDecimal.parse(text, maxDigits: 7) else { return nil }
        return expiries.first(where: { $0.seconds == Int64(value) })?.seconds
    }
}
