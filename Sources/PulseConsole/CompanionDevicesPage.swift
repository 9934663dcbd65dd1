import PulseCore
import PulseHTML
import PulseQR
import PulseServerStorage
import PulseStaffAPI

/// `/console/companion`: "Companion app devices" (contract §1). Mints device codes and attendee links,
/// shows each secret once (text and QR code of its enrollment link, docs/console.md), lists codes and links
/// by id only, revokes them. Admins only.
enum CompanionDevicesPage {
    static let page = ConsolePage(path: "companion", nav: "Companion app devices", allowed: { $0.may(.listTokens) }, get: render, post: act)

    /// The expiry choices of both forms: label and seconds.
    static let expiries: [(label: String, seconds: Int64)] = [
        ("1 hour", 3600), ("8 hours", 8 * 3600), ("1 day", 86_400), ("3 days", 3 * 86_400), ("7 days", 7 * 86_400),
    ]

    static func render(_ context: PageContext) throws -> PageResult {
        .page(try view(context, minted: nil))
    }

    static func view(_ context: PageContext, minted: MintedView?) throws -> PageView {
        let sessions = try context.storage.sessions()
        let series = Array(Set(sessions.compactMap(\.seriesId))).sorted()
        let recent = try context.storage.recentEnrollments(since: context.now - 60)
        let credentials = try context.storage.credentials().filter { $0.kind != .staffToken }
        let infos = context.console.catalog.infos(storage: context.storage)
        return PageView(title: "Companion app devices") {
            if let minted { minted.node }
            if context.principal.may(.mintDeviceCode) {
                section(Attribute("aria-labelledby", "new-code")) {
                    h2(.id("new-code")) { "New device code" }
                    p(.class("muted")) { "A code enrolls one phone, once. It is shown once: copy it or let the phone scan it." }
                    context.form(action: "/console/companion") {
                        input(.type("hidden"), .name("do"), .value("code"))
                        div(.class("field")) {
                            label(.for("code-scope")) { "Session or series" }
                            select(.id("code-scope"), .name("scope"), .required()) {
                                for session in sessions {
                                    option(.value("session:" + session.id)) { "Session: " + (infos[session.id]?.title ?? session.id) }
                                }
                                for id in series { option(.value("series:" + id)) { "Series: \(id)" } }
                            }
                        }
                        expiryField(id: "code-expiry", default: 86_400)
                        button(.type("submit")) { "New device code" }
                    }
                }
            }
            if context.principal.may(.mintRegistrationToken) {
                section(Attribute("aria-labelledby", "new-link")) {
                    h2(.id("new-link")) { "New attendee link" }
                    p(.class("muted")) { "A link enrolls attendees' phones for a series, up to its device cap. It is shown once." }
                    context.form(action: "/console/companion") {
                        input(.type("hidden"), .name("do"), .value("link"))
                        div(.class("field")) {
                            label(.for("link-series")) { "Series" }
                            select(.id("link-series"), .name("series"), .required()) {
                                for id in series { option(.value(id)) { id } }
                            }
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
                        caption { "Codes and links (\(credentials.count))" }
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
                            for record in credentials {
                                let status = StaffJSON.status(record, now: context.now)
                                tr {
                                    td { code { record.id } }
                                    td { record.kind == .deviceCode ? "Device code" : "Attendee link" }
                                    td { bdi { PageText.scope(record.scope) } }
                                    td { span(.class("state state-\(status)")) { status } }
                                    td(.class("num")) { "\(record.devicesEnrolled)" + (record.maxDevices.map { " of \($0)" } ?? "") }
                                    td(.class("num")) { "\(recent[record.id] ?? 0)" }
                                    td(.class("actions")) {
                                        if record.revokedAt == nil, context.principal.may(.revokeToken) {
                                            context.form(action: "/console/companion", confirm: "Revoke \(record.id)? Phones it enrolled keep working.") {
                                                input(.type("hidden"), .name("do"), .value("revoke"))
                                                input(.type("hidden"), .name("id"), .value(record.id))
                                                button(.type("submit"), .class("danger"), Attribute("aria-label", "Revoke \(record.id)")) { "Revoke" }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
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
        switch form["do"] {
        case "code":
            guard let scope = scope(form.text("scope")), try scopeExists(scope, context) else {
                return .refused(status: 400, message: "Choose a session or series from the list.")
            }
            guard let lifetime = expiry(form) else { return .refused(status: 400, message: "Choose one of the listed expiry times.") }
            return minted(context, context.staff(.post, "device-codes", [scope.kind: .string(scope.id), "expires": .int(Int(lifetime))]))
        case "link":
            guard let series = form.text("series"), try context.storage.sessions().contains(where: { $0.seriesId == series }) else {
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
            guard let id = form.text("id"), id.utf8.count == 12, id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
                  let record = try context.storage.credentials().first(where: { $0.id == id }), record.kind != .staffToken
            else { return .refused(status: 404, message: "There is no such code or link.") }
            let answer = context.staff(.post, "tokens/revoke", ["token": .string(id)])
            guard answer.ok else { return .refused(status: answer.status, message: answer.message) }
            return .redirect("/console/companion", notice: "Revoked \(id).")
        default:
            return .refused(status: 400, message: "The form could not be read.")
        }
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
        do { return .page(try Self.view(context, minted: view)) } catch { return .refused(status: 503, message: "The list could not be read now.") }
    }

    static func scope(_ text: String?) -> DeviceScope? {
        guard let text, text.utf8.count <= 200, let colon = text.firstIndex(of: ":") else { return nil }
        return DeviceScope(kind: String(text[..<colon]), id: String(text[text.index(after: colon)...]))
    }

    static func scopeExists(_ scope: DeviceScope, _ context: PageContext) throws -> Bool {
        let sessions = try context.storage.sessions()
        switch scope {
        case let .session(id): return sessions.contains { $0.id == id }
        case let .series(id): return sessions.contains { $0.seriesId == id }
        }
    }

    /// The chosen expiry in seconds: one of `expiries`, else nil.
    static func expiry(_ form: FormFields) -> Int64? {
        guard let text = form.text("expires"), let value = BoundedDecimal.parse(text, maxDigits: 7) else { return nil }
        return expiries.first(where: { $0.seconds == Int64(value) })?.seconds
    }
}

/// A code or link just minted: its secret, its enrollment link and QR code, shown on this one answer only.
struct MintedView {
    let node: Node

    init(kind: CredentialKind, secret: String, id: String, scope: DeviceScope?, expires: String?, server: String?) {
        let isCode = kind == .deviceCode
        let credential: EnrollmentLink.Credential = isCode ? .deviceCode(secret) : .registrationToken(secret)
        let link = server.flatMap { try? EnrollmentLink(server: $0, credential: credential) }
        let qr = link.flatMap { try? QRCode($0.text, errorCorrection: .medium) }
        let what = isCode ? "Device code" : "Attendee link"
        // The text beside the QR code on a laptop's screen, so the whole code shows to a camera without scrolling.
        node = section(.class("notice minted"), Attribute("aria-labelledby", "minted")) {
            div(.class("minted-text")) {
                h2(.id("minted")) { "\(what) \(id) for \(PageText.scope(scope))" }
                p {
                    strong { "Shown once." }
                    " After you leave this page only its id, \(id), is shown again."
                }
                if isCode {
                    p {
                        "Code: "
                        code(.class("secret")) { secret }
                    }
                }
                if let link {
                    p {
                        "Link: "
                        code(.class("secret")) { link.text }
                    }
                } else {
                    p(.class("error")) { "No link: start pulse-server with --public-url so the console knows the address phones reach it at." }
                }
                if let expires { p(.class("muted")) { "Expires \(expires)." } }
            }
            if let qr {
                figure(.class("qr")) {
                    qr.svg(moduleSize: 6, quietZone: 4, label: "QR code of the enrollment link of \(what.lowercased()) \(id)")
                    figcaption { "Scan with the phone's camera, or run pulse-device enroll --link with the link above." }
                }
            }
        }
    }
}
