import PulseHTML

/// The frame of every signed-in page: the event's name, the navigation the principal may use, who is
/// signed in and "Sign out", then the notice or error line and the page's content.
enum Layout {
    static func page(_ view: PageView, context: PageContext, pages: [ConsolePage]) -> Node {
        let current = context.path
        let links = pages.filter { $0.nav != nil && $0.allowed(context.principal) }.compactMap { page -> (String, String)? in
            guard let label = page.nav, let url = page.url else { return nil }
            return (label, url)
        }
        let section = Self.section(of: current, links: links.map(\.1))
        return frame(title: view.title, page: "console", events: view.events) {
            a(.class("skip"), .href("#main")) { "Skip to content" }
            header(.class("top")) {
                p(.class("event")) { context.eventName }
                if !links.isEmpty {
                    nav(Attribute("aria-label", "Console")) {
                        ul {
                            for (label, url) in links {
                                li {
                                    a(.href(url), url == section ? Attribute("aria-current", "page") : .none) { label }
                                }
                            }
                        }
                    }
                }
                div(.class("who")) {
                    span { roleText(context.principal) }
                    context.form(action: "/console/sign-out") {
                        button(.type("submit"), .class("secondary")) { "Sign out" }
                    }
                }
            }
            main(.id("main")) {
                if let notice = context.notice { p(.class("notice"), .role("status")) { notice } }
                if let error = view.error { p(.class("error"), .role("alert")) { error } }
                h1 { view.title }
                view.content
                p(.id("live-status"), .class("muted"), Attribute("aria-live", "polite"))
            }
        }
    }

    /// A whole document: `<head>` with the hashed stylesheet and script, `<body data-page data-events>`.
    /// The navigation link the page at `path` belongs to: a session's live view (`/console/sessions/<id>/live…`)
    /// under "Live view", any other page under the longest link that is its path or a folder of it.
    static func section(of path: String, links: [String]) -> String? {
        let parts = path.split(separator: "/")
        if parts.count >= 4, parts[1] == "sessions", parts[3] == "live", links.contains("/console/live") { return "/console/live" }
        return links.filter { path == $0 || path.hasPrefix($0 + "/") }.max { $0.count < $1.count }
    }

    static func frame(title: String, page: String, events: String?, @NodeBuilder content: () -> NodeList) -> Node {
        let inner = content()
        return .fragment {
            Node.doctype
            html(.lang("en")) {
                head {
                    meta(.charset("utf-8"))
                    meta(.name("viewport"), .content("width=device-width, initial-scale=1"))
                    meta(.name("color-scheme"), .content("light dark"))
                    PulseHTML.title(title + " · Pulse console")
                    // No favicon request (a 404 in every browser console): an empty data: icon, which the CSP allows.
                    link(.rel("icon"), .href("data:,"))
                    link(.rel("stylesheet"), .href(ConsoleAssets.styleSheet.path))
                    script(src: ConsoleAssets.script.path, .defer())
                }
                body(Attribute("data-page", page), events.map { Attribute("data-events", $0) } ?? .none) {
                    inner
                }
            }
        }
    }

    static func roleText(_ principal: ConsolePrincipal) -> String {
        switch principal.role {
        case .admin: "Admin"
        case .moderator: principal.session.map { "Moderator · \($0)" } ?? "Moderator"
        case .presenter: principal.session.map { "Presenter · \($0)" } ?? "Presenter"
        }
    }
}
