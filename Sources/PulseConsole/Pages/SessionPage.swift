import PulseCore
import PulseHTML
import PulseHTTPServer
import PulseServerStorage
import PulseSyncAPI

/// `/console/sessions/<id>`: a session's state and its buttons, the download and venue rules, and the
/// clicker ("Next slide", "Slide N of M", "K of D devices have this slide's key"), live over the console's
/// event stream (`/console/sessions/<id>/events`). A presenter sees only their own session, and only what
/// they may do (the clicker, Go live, End session); a moderator sees it all and changes nothing.
enum SessionPage {
    static let page = ConsolePage(path: "sessions/*", allowed: { _ in true }, get: render, post: act)
    static let advancePage = ConsolePage(path: "sessions/*/advance", allowed: { _ in true }, get: nil, post: advance)
    static let eventsPage = ConsolePage(path: "sessions/*/events", allowed: { _ in true }, get: events)

    /// The state buttons, with their accessible names.
    static let stateButtons: [(SessionState, String)] = [
        (.scheduled, "Set scheduled"), (.rehearsal, "Start rehearsal"), (.live, "Go live"), (.ended, "End session"),
    ]

    /// What the page shows and offers, read once: the view is a pure function of it.
    struct Model {
        let session: SessionRecord
        let info: SessionCatalog.Info?
        let clicker: Clicker
        let forms: Forms
        let mayReadLive: Bool
        let mayReadReport: Bool
        let mayAdvance: Bool
        let mayChangeRules: Bool
        /// The state buttons the principal may press.
        let states: [SessionState]
    }

    static func render(_ context: PageContext) throws -> PageResult {
        let id = context.parameters[0]
        guard context.principal.maySee(session: id), let session = try context.storage.session(id: id) else { return notFound }
        let principal = context.principal
        return .page(view(Model(
            session: session, info: context.console.catalog.infos(storage: context.storage)[id], clicker: Clicker(session, holders: context.sync.keyHolders),
            forms: context.forms, mayReadLive: principal.may(.readLiveDevices, session: id), mayReadReport: principal.may(.readReport, session: id),
            mayAdvance: mayAdvance(principal, id), mayChangeRules: principal.may(.changeSession, session: id), states: stateChoices(principal, id))))
    }

    static func view(_ model: Model) -> PageView {
        let (session, info, clicker, id) = (model.session, model.info, model.clicker, model.session.id)
        let base = "/console/sessions/" + id
        return PageView(title: info?.title ?? id, events: base + "/events") {
            p(.class("muted")) {
                bdi { info?.room ?? "No room" }
                " · "
                SessionText.time(info)
                " · "
                code { id }
            }
            if model.mayReadLive || model.mayReadReport {
                p(.class("actions")) {
                    // Named for the session: the navigation's "Live view" is the list of all.
                    if model.mayReadLive {
                        a(.href(base + "/live"), Attribute("aria-label", "Live view of \(info?.title ?? id)")) { "Live view" }
                    }
                    if model.mayReadReport {
                        a(.href(base + "/report"), Attribute("aria-label", "Report of \(info?.title ?? id)")) { "Report" }
                    }
                }
            }
            section(.class("clicker"), Attribute("aria-labelledby", "clicker-heading")) {
                h2(.id("clicker-heading")) { "Clicker" }
                p(.class("state-line")) { "State: "; strong(.id("state-text")) { clicker.stateText } }
                // The state buttons first: a presenter on a phone goes live, then presses Next, without scrolling.
                if !model.states.isEmpty {
                    div(.class("actions state-buttons"), .role("group"), Attribute("aria-label", "Session state")) {
                        for (state, name) in stateButtons where model.states.contains(state) {
                            model.forms.form(action: base, confirm: state == .ended ? "End the session? Its state can be set again later." : nil) {
                                input(.type("hidden"), .name("action"), .value("state"))
                                input(.type("hidden"), .name("state"), .value(state.rawValue))
                                button(.type("submit"), .class(state == .ended ? "danger" : "secondary"), .disabled(session.state == state)) { name }
                            }
                        }
                    }
                }
                p(.class("slide"), .id("slide-text"), Attribute("aria-live", "polite")) { clicker.slideText }
                p(.class("keys"), .id("keys-text"), Attribute("aria-live", "polite")) { clicker.keysText }
                if model.mayAdvance {
                    model.forms.form(action: base + "/advance", id: "next-form") {
                        input(.type("hidden"), .name("slide"), .value(String(clicker.next)))
                        button(.type("submit"), .class("next"), .disabled(!clicker.canAdvance)) { "Next slide" }
                    }
                    p(.class("muted")) { "Keys: → , Space or PageDown (a presenter remote works)." }
                    p(.id("advance-hint"), .class("muted")) { clicker.hint }
                }
                p(.class("why")) {
                    "There is no previous-slide button: the frontier never goes back. A slide once shown stays released to every device; attendees page back on their own screens."
                }
            }
            section(Attribute("aria-labelledby", "rules-heading")) {
                h2(.id("rules-heading")) { "Download and venue rules" }
                dl(.class("rules")) {
                    dt { "Download after the session" }
                    dd {
                        session.allowDownload
                            ? "Allowed: once the session has ended, every device gets the whole deck."
                            : "Not allowed: after the session, devices keep only the slides that were shown."
                    }
                    dt { "Venue rule" }
                    dd {
                        session.venueNetworks.isEmpty
                            ? "Not locked: keys are released on any network."
                            : "Locked: keys are released only to devices on \(session.venueNetworks.map(\.description).joined(separator: ", "))."
                    }
                }
                if model.mayChangeRules {
                    model.forms.form(action: base) {
                        input(.type("hidden"), .name("action"), .value("rules"))
                        div(.class("field")) {
                            label(.for("allow-download")) {
                                input(.type("checkbox"), .id("allow-download"), .name("allowDownload"), .value("on"), .checked(session.allowDownload))
                                " Allow download after the session"
                            }
                        }
                        div(.class("field")) {
                            label(.for("venue-networks")) { "Venue networks" }
                            input(
                                .type("text"), .id("venue-networks"), .name("venueNetworks"),
                                .value(session.venueNetworks.map(\.description).joined(separator: ", ")), Attribute("aria-describedby", "venue-help"),
                                Attribute("spellcheck", "false"))
                            p(.id("venue-help"), .class("muted")) { "Networks like 10.20.0.0/16, separated by commas; empty unlocks the session." }
                        }
                        button(.type("submit")) { "Save rules" }
                    }
                }
            }
        }
    }

    static let notFound = PageResult.page(PageView(title: "Not found", status: 404) { p { "There is no such session, or your staff token may not see it." } })

    /// Who may move the frontier: admins, and a presenter on their session.
    static func mayAdvance(_ principal: ConsolePrincipal, _ session: String) -> Bool { principal.may(.advance, session: session) }

    /// The states the principal may set: all four for an admin, Go live and End session for the session's presenter.
    static func stateChoices(_ principal: ConsolePrincipal, _ session: String) -> [SessionState] {
        if principal.may(.changeSession, session: session) { return [.scheduled, .rehearsal, .live, .ended] }
        return principal.may(.goLiveOrEnd, session: session) ? [.live, .ended] : []
    }

    /// `POST /console/sessions/<id>`: `action=state&state=…` or `action=rules&allowDownload=on&venueNetworks=…`.
    static func act(_ context: PageContext, _ form: FormFields) throws -> PageResult {
        let id = context.parameters[0]
        guard Identifier.isValid(id) else { return notFound }
        let back = "/console/sessions/" + id
        switch form["action"] {
        case "state":
            guard let text = form["state"], let state = SessionState(rawValue: text), stateButtons.contains(where: { $0.0 == state }) else {
                return .refused(status: 400, message: "Choose one of the state buttons.")
            }
            let answer = context.staff(.other("PATCH"), "sessions/" + id, ["state": .string(state.rawValue)])
            guard answer.ok else { return .refused(answer) }
            return .redirect(back, notice: "The session is now \(SessionText.state(state).lowercased()).")
        case "rules":
            let networks = (form["venueNetworks"] ?? "").split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
            guard networks.count <= 64 else { return .refused(status: 400, message: "Give at most 64 venue networks.") }
            let body: JSONValue = ["allowDownload": .bool(form["allowDownload"] == "on"), "venueNetworks": .array(networks.map { .string($0) })]
            let answer = context.staff(.other("PATCH"), "sessions/" + id, body)
            guard answer.ok else { return .refused(answer) }
            return .redirect(back, notice: "Rules saved.")
        default:
            return .refused(status: 400, message: "That form is not one of this page's.")
        }
    }

    /// `POST /console/sessions/<id>/advance` `slide=n`: the clicker (the script posts it without a reload).
    static func advance(_ context: PageContext, _ form: FormFields) throws -> PageResult {
        let id = context.parameters[0]
        guard Identifier.isValid(id) else { return notFound }
        guard let text = form["slide"], let slide = BoundedDecimal.parse(text, maximum: 1_000_000) else {
            return .refused(status: 400, message: "The slide number is missing.")
        }
        let answer = context.staff(.post, "sessions/\(id)/advance", ["maxShown": .int(slide)])
        guard answer.ok else { return .refused(answer) }
        return .redirect("/console/sessions/" + id, notice: nil)
    }

    /// `GET /console/sessions/<id>/events`: the clicker's live values (`ClickerFeed`).
    static func events(_ context: PageContext) throws -> PageResult {
        let id = context.parameters[0]
        guard context.principal.maySee(session: id), try context.storage.session(id: id) != nil else { return notFound }
        let stream = try context.console.feed.open(session: id, consoleSession: context.sessionId, tokenHash: context.tokenHash)
        return .response(HTTPResponse(status: 200, headers: ConsoleStreamLimits.headers, body: .stream(stream), note: "console:events"))
    }
}
