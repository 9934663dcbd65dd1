import PulseCore
import PulseHTML
import PulseQR
import PulseServerStorage
import PulseStaffAPI

/// `/console/staff-tokens`: "Staff tokens". Mints a staff token of a role (a presenter of one session, a
/// moderator of every session or one, an admin) through the staff API (`POST staff-tokens`: its role checks
/// and audit log), shows the token once and, for a presenter, the presenter link `/console/present#<token>`
/// and its QR code; lists the staff tokens by id, role and scope (never the secret), `pageSize` to a page, with
/// "Revoke" (`tokens/revoke`). Admins only.
enum StaffTokensPage {
    static let page = ConsolePage(path: "staff-tokens", nav: "Staff tokens", allowed: { $0.may(.listTokens) }, get: render, post: act)

    static let pageSize = 50
    /// The expiry choices: label and seconds (a presenter's day, a moderator's event).
    static let expiries: [(label: String, seconds: Int64)] = [
        ("8 hours", 8 * 3600), ("12 hours", 12 * 3600), ("1 day", 86_400), ("3 days", 3 * 86_400), ("7 days", 7 * 86_400), ("30 days", 30 * 86_400),
    ]

    struct Model {
        struct Row {
            let record: CredentialRecord
            let status: String
            let isOwn: Bool
        }

        let forms: Forms
        var minted: Minted?
        let mayMint: Bool
        let mayRevoke: Bool
        let choices: SessionCatalog.Choices
        let titles: [String: String]
        let rows: [Row]
        let total: Int
        let from: Int
    }

    /// A token just minted, shown on this one answer only.
    struct Minted {
        let id: String
        let token: String
        let role: StaffRole
        let session: String?
        let expires: String?
        /// The presenter link (full when the server's public URL is known, else its path); nil for other roles.
        let presenterLink: String?
        /// Whether `presenterLink` is a whole URL a phone's camera can open.
        let isWholeLink: Bool
    }

    static func render(_ context: PageContext) throws -> PageResult {
        .page(view(try model(context, from: Pager.from(context.query))))
    }

    static func model(_ context: PageContext, from: Int, minted: Minted? = nil) throws -> Model {
        let listed = try context.storage.credentials(kinds: [.staffToken], offset: from, limit: pageSize)
        let infos = context.console.catalog.infos(storage: context.storage)
        return Model(
            forms: context.forms, minted: minted, mayMint: context.principal.may(.mintStaffToken), mayRevoke: context.principal.may(.revokeToken),
            choices: context.console.catalog.choices(storage: context.storage), titles: infos.mapValues(\.title),
            rows: listed.credentials.map {
                Model.Row(record: $0, status: StaffJSON.status($0, now: context.now), isOwn: $0.id == context.principal.tokenId)
            },
            total: listed.total, from: from)
    }

    static func view(_ model: Model) -> PageView {
        PageView(title: "Staff tokens") {
            if let minted = model.minted { mintedNode(minted, titles: model.titles) }
            if model.mayMint {
                section(Attribute("aria-labelledby", "new-token")) {
                    h2(.id("new-token")) { "New staff token" }
                    p(.class("muted")) {
                        "A presenter token opens one session's clicker (give the presenter its link); a moderator token reads the live view and reports of every session, or one; an admin token does everything. It is shown once."
                    }
                    model.forms.form(action: "/console/staff-tokens") {
                        input(.type("hidden"), .name("do"), .value("mint"))
                        div(.class("field")) {
                            label(.for("token-role")) { "Role" }
                            select(.id("token-role"), .name("role"), .required()) {
                                option(.value("presenter"), .selected(true)) { "Presenter: one session's clicker" }
                                option(.value("moderator")) { "Moderator: reads, changes nothing" }
                                option(.value("admin")) { "Admin: everything" }
                            }
                        }
                        div(.class("field")) {
                            label(.for("token-session")) { "Session" }
                            select(.id("token-session"), .name("session"), Attribute("aria-describedby", "token-session-help")) {
                                option(.value("")) { "Every session (moderator or admin)" }
                                model.choices.sessionOptions
                            }
                            p(.id("token-session-help"), .class("muted")) { "A presenter needs a session; a moderator may have one; an admin has none." }
                        }
                        div(.class("field")) {
                            label(.for("token-expiry")) { "Expires after" }
                            select(.id("token-expiry"), .name("expires")) {
                                for choice in expiries { option(.value("\(choice.seconds)"), .selected(choice.seconds == 12 * 3600)) { choice.label } }
                            }
                        }
                        button(.type("submit")) { "New staff token" }
                    }
                }
            }
            section(Attribute("aria-labelledby", "tokens")) {
                h2(.id("tokens")) { "Tokens" }
                div(.class("table-wrap")) {
                    table {
                        caption { "Staff tokens (\(model.total))" }
                        thead {
                            tr {
                                for header in ["Id", "Role", "Scope", "Status", "Created", "Expires", "Actions"] { th(.scope("col")) { header } }
                            }
                        }
                        tbody {
                            for row in model.rows { self.row(row, model) }
                        }
                    }
                }
                Pager(path: "/console/staff-tokens", from: model.from, shown: model.rows.count, total: model.total, size: pageSize, label: "Pages of staff tokens").node
            }
        }
    }

    static func row(_ row: Model.Row, _ model: Model) -> Node {
        let record = row.record
        return tr {
            td {
                code { record.id }
                if row.isOwn { " (yours)" }
            }
            td { record.staffRole.map(roleName) ?? "unknown" }
            td { bdi { record.staffSession.map { "session " + (model.titles[$0].map { "\($0) (\(record.staffSession ?? ""))" } ?? $0) } ?? "every session" } }
            td { span(.class("state state-\(row.status)")) { row.status } }
            td { PageText.time(record.createdAt) }
            td { record.expiresAt.map(PageText.time) ?? "never" }
            td(.class("row-actions")) {
                if record.revokedAt == nil, model.mayRevoke {
                    let question = row.isOwn ? "Revoke \(record.id)? It is the token you are signed in with: you will be signed out." : "Revoke \(record.id)?"
                    model.forms.form(action: "/console/staff-tokens", confirm: question) {
                        input(.type("hidden"), .name("do"), .value("revoke"))
                        input(.type("hidden"), .name("id"), .value(record.id))
                        button(.type("submit"), .class("danger"), Attribute("aria-label", "Revoke \(record.id)")) { "Revoke" }
                    }
                }
            }
        }
    }

    static func roleName(_ role: StaffRole) -> String {
        switch role {
        case .admin: "Admin"
        case .moderator: "Moderator"
        case .presenter: "Presenter"
        }
    }

    static func mintedNode(_ minted: Minted, titles: [String: String]) -> Node {
        let scope = minted.session.map { " of " + (titles[$0] ?? $0) } ?? ""
        let qr = minted.isWholeLink ? minted.presenterLink.flatMap { try? QRCode($0, errorCorrection: .medium) } : nil
        return section(.class("notice minted"), Attribute("aria-labelledby", "minted")) {
            div(.class("minted-text")) {
                h2(.id("minted")) { "\(roleName(minted.role)) token \(minted.id)\(scope)" }
                p {
                    strong { "Shown once." }
                    " After you leave this page only its id, \(minted.id), is shown again."
                }
                p {
                    "Token: "
                    code(.class("secret")) { minted.token }
                }
                if let link = minted.presenterLink {
                    p {
                        "Presenter link: "
                        code(.class("secret")) { link }
                    }
                    p(.class("muted")) {
                        minted.isWholeLink
                            ? "The presenter opens it on a laptop or phone and lands on the clicker, signed in. The token is in the part after #, which browsers never send to a server."
                            : "Open it on this server's address (start pulse-server with --public-url to get a whole link and its QR code)."
                    }
                }
                if let expires = minted.expires { p(.class("muted")) { "Expires \(expires)." } }
            }
            if let qr {
                figure(.class("qr")) {
                    qr.svg(moduleSize: 6, quietZone: 4, label: "QR code of the presenter link of token \(minted.id)")
                    figcaption { "Scan with the presenter's phone camera." }
                }
            }
        }
    }

    // MARK: Actions

    /// Mints and revokes through the staff API as the signed-in principal (its roles, checks and audit log).
    static func act(_ context: PageContext, _ form: FormFields) throws -> PageResult {
        switch form["do"] {
        case "mint":
            guard let role = form.text("role").flatMap(StaffRole.init(rawValue:)) else {
                return .refused(status: 400, message: "Choose a role from the list.")
            }
            let session = form.text("session")
            if let session, !context.console.catalog.choices(storage: context.storage).sessions.contains(session) {
                return .refused(status: 400, message: "Choose a session from the list.")
            }
            guard let text = form.text("expires"), let value = BoundedDecimal.parse(text, maxDigits: 8),
                  let lifetime = expiries.first(where: { $0.seconds == Int64(value) })?.seconds
            else { return .refused(status: 400, message: "Choose one of the listed expiry times.") }
            // The staff API decides whether the role goes with the session (a presenter needs one, an admin has none).
            var body: [String: JSONValue] = ["role": .string(role.rawValue), "expires": .int(Int(lifetime))]
            if let session { body["session"] = .string(session) }
            let answer = context.staff(.post, "staff-tokens", .object(body))
            guard answer.ok, let json = answer.json, let token = json["secret"]?.stringValue, let id = json["id"]?.stringValue else {
                return .refused(status: answer.ok ? 500 : answer.status, message: answer.message)
            }
            let server = context.enrollmentServer
            let minted = Minted(
                id: id, token: token, role: role, session: json["session"]?.stringValue, expires: json["expiresAt"]?.stringValue,
                presenterLink: role == .presenter ? PresenterLink.text(server: server, token: token) : nil, isWholeLink: server != nil)
            do { return .page(view(try model(context, from: 0, minted: minted))) } catch {
                return .refused(status: 503, message: "The list could not be read now.")
            }
        case "revoke":
            guard let id = form.text("id"), CompanionDevicesPage.isListingId(id),
                  try context.storage.credentials().contains(where: { $0.id == id && $0.kind == .staffToken })
            else { return .refused(status: 404, message: "There is no such staff token.") }
            let answer = context.staff(.post, "tokens/revoke", ["token": .string(id)])
            guard answer.ok else { return .refused(status: answer.status, message: answer.message) }
            return .redirect("/console/staff-tokens", notice: "Revoked \(id).")
        default:
            return .refused(status: 400, message: "The form could not be read.")
        }
    }
}

/// The presenter link of a presenter token: `<server>/console/present#<token>` (docs/console.md). The token
/// is in the fragment, which a browser never sends: it reaches no request line or log; the page's script
/// posts it once to sign in. Without a known server URL, the path alone.
public enum PresenterLink {
    public static let path = "/console/present"

    public static func text(server: String?, token: String) -> String { (server ?? "") + path + "#" + token }
}
