import PulseHTML
import PulseHTTPServer

/// One console page: where it lives, who may open it, what it shows (`get`) and what its forms do (`post`).
/// Register it in `ConsolePages.all` (ConsolePages.swift); the console routes, authenticates, checks CSRF and
/// `Origin`, lays the page out and adds the security headers.
///
///     ConsolePage(path: "devices", nav: "Devices", allowed: { $0.isAdmin },
///                 get: { context in .page(PageView(title: "Devices") { … }) },
///                 post: { context, form in …; return .redirect("/console/devices", notice: "Device revoked.") })
public struct ConsolePage: Sendable {
    /// Path segments under `/console/`, `*` for one segment of any value (`context.parameters`): `"sessions"`,
    /// `"sessions/*"`, `"sessions/*/report"`.
    public let path: [String]
    /// The label of its link in the header's navigation (nil: not in it). Links appear in `ConsolePages.all`'s order.
    public let nav: String?
    /// Where the navigation link goes when `path` has a `*` (nil: the page's own path).
    public let navTarget: String?
    /// Whether `principal` may open the page (GET) at all; a POST also needs its own checks in the staff API.
    public let allowed: @Sendable (ConsolePrincipal) -> Bool
    public let get: (@Sendable (PageContext) throws -> PageResult)?
    /// Runs on the console's action threads (never a server thread), so it may call the staff API and wait.
    public let post: (@Sendable (PageContext, FormFields) throws -> PageResult)?

    public init(
        path: String, nav: String? = nil, navTarget: String? = nil, allowed: @escaping @Sendable (ConsolePrincipal) -> Bool,
        get: (@Sendable (PageContext) throws -> PageResult)?, post: (@Sendable (PageContext, FormFields) throws -> PageResult)? = nil
    ) {
        self.path = path.split(separator: "/").map(String.init)
        self.nav = nav
        self.navTarget = navTarget
        self.allowed = allowed
        self.get = get
        self.post = post
    }

    /// The `*` values when `segments` is this page's path, else nil.
    func match(_ segments: [String]) -> [String]? {
        guard segments.count == path.count else { return nil }
        var parameters: [String] = []
        for (pattern, segment) in zip(path, segments) {
            if pattern == "*" {
                guard !segment.isEmpty else { return nil }
                parameters.append(segment)
            } else if pattern != segment {
                return nil
            }
        }
        return parameters
    }

    /// `/console/<path>` when it has no `*`.
    var url: String? { path.contains("*") ? navTarget : "/console/" + path.joined(separator: "/") }
}

/// A page to lay out: its title (the `<h1>` and `<title>`), its content, and what the layout needs.
public struct PageView: Sendable {
    public var title: String
    public var status: Int
    /// The console's event stream the script listens to (`/console/…/events`), if the page updates live.
    public var events: String?
    /// An error line shown above the content (a refused form): `role="alert"`.
    public var error: String?
    public var content: Node

    public init(title: String, status: Int = 200, events: String? = nil, error: String? = nil, @NodeBuilder content: () -> NodeList) {
        self.title = title
        self.status = status
        self.events = events
        self.error = error
        self.content = .fragment(content)
    }
}

/// What a page's `get` or `post` answers.
public enum PageResult: Sendable {
    /// The page, laid out (header, navigation, notices).
    case page(PageView)
    /// 303 to `location` (a console path, never one built from data), with a one-time notice on the next page.
    case redirect(String, notice: String?)
    /// The page's `get` again with this error line and status (a form whose action was refused): what a
    /// person sees instead of their form vanishing. A page without a `get` shows the page one segment up
    /// (`sessions/*/advance`: the session's page).
    case refused(status: Int, message: String)
    /// Refused as too fast (429): as `refused`, with `Retry-After: retryAfter` (seconds), which the script
    /// waits before it sends again (`PageResult.refused(_ answer:)`).
    case limited(retryAfter: Int, message: String)
    /// An answer as it is (an event stream, a CSV download); the security headers are added.
    case response(HTTPResponse)
}
