import Foundation
import PulseCrypto
import PulseHTML
import PulseHTTPServer
import PulseServerStorage
import PulseStaffAPI
import PulseSyncAPI

/// `/console` and `/console/…`: the staff console, server-rendered (docs/console.md). pulse-server's
/// `SyncServer` routes here.
///
/// | path | what |
/// |---|---|
/// | `GET /console/assets/<sha256>.css|js` | the stylesheet and script, immutable |
/// | `GET`/`POST /console/sign-in` | the sign-in form; a token → a console session cookie |
/// | `GET /console/present` | the presenter link (`#<token>`; its script posts the token to sign-in) |
/// | `POST /console/sign-out` | ends the session |
/// | anything else | a page of `ConsolePages.all`, signed in |
///
/// Every response carries `SecurityHeaders`; every `POST` but sign-in needs the session cookie, the session's
/// CSRF token (the `csrf` field or `X-CSRF-Token`) and the server's own origin, or it is 403 and changes
/// nothing. Posts run on the console's action threads (`WorkQueue`), never on a server thread.
public final class Console: HTTPResponder {
    let sync: SyncAPI
    let staff: StaffAPI
    public let configuration: ConsoleConfiguration
    let sessions: ConsoleSessions
    let catalog = SessionCatalog()
    let actions: WorkQueue
    let pages: [ConsolePage]
    let feed: ClickerFeed
    /// The live view's streams (Live/LiveFeed.swift).
    let liveFeed: LiveFeed
    /// The caps on both feeds' streams per console session and per staff token.
    let streamLimits: ConsoleStreamLimits

    /// The request headers the console reads (`HTTPServer.Configuration.requestHeaders` must hold them).
    public static let requestHeaders = ["cookie", "origin", "referer", "host", "x-forwarded-proto", "x-csrf-token", "sec-fetch-site", "content-type"]

    public init(sync: SyncAPI, staff: StaffAPI, configuration: ConsoleConfiguration = ConsoleConfiguration()) {
        self.sync = sync
        self.staff = staff
        self.configuration = configuration
        let sessions = ConsoleSessions(idleSeconds: configuration.idleSeconds, maxAgeSeconds: configuration.maxAgeSeconds, capacity: configuration.maxSessions)
        self.sessions = sessions
        actions = WorkQueue(threads: 2, maxQueued: 256, name: "console-action")
        pages = ConsolePages.all
        let isStillSignedIn: @Sendable (String, [UInt8]) -> Bool = { id, hash in
            sessions.isLive(id, now: sync.clock()) && ((try? staff.principal(tokenHash: hash, now: sync.seconds(sync.clock()))) ?? nil) != nil
        }
        let limits = ConsoleStreamLimits(
            perSession: configuration.maxStreamsPerSession, perToken: configuration.maxStreamsPerToken, isStillSignedIn: isStillSignedIn)
        streamLimits = limits
        sync.hub.onTick { [weak limits] in limits?.endSignedOut(now: sync.clock()) }
        feed = ClickerFeed(sync: sync, limits: limits)
        liveFeed = LiveFeed(sync: sync, limits: limits)
    }

    /// Ends the action threads, letting queued actions finish (the server stops).
    public func stop(drainSeconds: Double = 5) { actions.drain(within: drainSeconds) }

    /// Console event streams open now: the clickers' and the live views'.
    public var openStreams: Int { feed.count + liveFeed.count }

    static let prefix = Array("/console".utf8)

    /// True for `/console` and `/console/…` (and their queries).
    public static func isConsolePath(_ target: [UInt8]) -> Bool {
        guard target.starts(with: prefix) else { return false }
        guard target.count > prefix.count else { return true }
        let next = target[prefix.count]
        return next == UInt8(ascii: "/") || next == UInt8(ascii: "?")
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try route(request)
        } catch let error as ServerError where error.kind == .unavailable {
            sync.alarm("console: database unavailable: \(error)")
            response = message(503, "Unavailable", "The database cannot be reached now. Try again in a moment.")
        } catch {
            sync.alarm("console: error answering \(request.method) \(RequestFacts.printablePath(request)): \(error)")
            response = message(500, "Something went wrong", "The server could not answer. The error is in its log.")
        }
        return response.deferred == nil ? SecurityHeaders.applied(to: response) : response
    }

    public func finished(_ exchange: HTTPExchange) {}

    // MARK: Routing

    private func route(_ request: HTTPRequest) throws -> HTTPResponse {
        let (path, _) = SyncAPI.split(request.target)
        if let asset = ConsoleAssets.asset(at: path) {
            return isRead(request) ? HTTPResponse(asset.response, note: "console:asset") : methodNotAllowed("GET")
        }
        let rest = path.dropFirst(Self.prefix.count).drop { $0 == UInt8(ascii: "/") }
        let segments = rest.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        switch segments.first ?? "" {
        case "sign-in" where segments.count == 1:
            return try signInRoute(request)
        case "sign-out" where segments.count == 1:
            return signOut(request)
        case "present" where segments.count == 1:
            return isRead(request) ? presentPage() : methodNotAllowed("GET")
        case "enroll" where segments.count == 1:
            return isRead(request) ? enrollPage() : methodNotAllowed("GET")
        case "assets":
            return message(404, "Not found", "There is no such asset.")
        default:
            break
        }
        let now = sync.clock()
        guard let signedIn = try signedIn(request, now: now) else {
            if isRead(request) { return redirect("/console/sign-in") }
            return message(403, "Not signed in", "Sign in first: nothing was changed.")
        }
        if segments == [""] || segments.isEmpty {
            return redirect(home(for: signedIn.principal))
        }
        guard let (page, parameters) = pages.lazy.compactMap({ page in page.match(segments).map { (page, $0) } }).first else {
            return message(404, "Not found", "There is no such page.", signedIn: signedIn, request: request)
        }
        guard page.allowed(signedIn.principal) else {
            return message(403, "Not allowed", "Your staff token may not open this page.", signedIn: signedIn, request: request)
        }
        if isRead(request) {
            guard let get = page.get else { return methodNotAllowed("POST") }
            let context = makeContext(request, signedIn, parameters: parameters, notice: sessions.takeNotice(signedIn.id))
            return render(try get(context), page: page, context: context, fetch: false)
        }
        guard request.method == .post, let post = page.post else { return methodNotAllowed(page.get == nil ? "POST" : "GET") }
        guard let form = FormFields(body: request.body) else { return message(400, "Bad request", "The form could not be read.") }
        guard checkForgery(request, form: form, csrf: signedIn.csrf) else {
            return message(403, "Refused", "This request did not come from the console's own page: nothing was changed.")
        }
        let context = makeContext(request, signedIn, parameters: parameters, notice: nil)
        let fetch = request.headers["x-csrf-token"] != nil
        return onActionThread { [self] in
            render(try post(context, form), page: page, context: context, fetch: fetch)
        }
    }

    /// Where a principal lands: a presenter on their session, everyone else on the sessions list.
    func home(for principal: ConsolePrincipal) -> String {
        if principal.isPresenter, let session = principal.session { return "/console/sessions/" + session }
        return "/console/sessions"
    }

    // MARK: Signed in

    struct SignedIn {
        let id: String
        let csrf: String
        let principal: ConsolePrincipal
        let tokenHash: [UInt8]
    }

    /// The request's console session and its principal, re-resolved from the token hash now: nil when there
    /// is no live session, or its token no longer resolves (the session then ends).
    func signedIn(_ request: HTTPRequest, now: Double) throws -> SignedIn? {
        guard let id = RequestFacts.sessionCookie(request), let entry = sessions.resolve(id, now: now) else { return nil }
        guard let principal = try principal(tokenHash: entry.tokenHash, now: sync.seconds(now)) else {
            sessions.end(id)
            return nil
        }
        return SignedIn(id: id, csrf: entry.csrfToken, principal: principal, tokenHash: entry.tokenHash)
    }

    /// The principal of the staff token with `tokenHash`, nil when it is revoked, expired or unknown.
    func principal(tokenHash: [UInt8], now: Int64) throws -> ConsolePrincipal? {
        try staff.principal(tokenHash: tokenHash, now: now).map(ConsolePrincipal.init)
    }

    func makeContext(_ request: HTTPRequest, _ signedIn: SignedIn, parameters: [String], notice: String?) -> PageContext {
        let secure = RequestFacts.isSecure(request, trustedProxies: sync.configuration.trustedProxies)
        let origin = RequestFacts.ownOrigin(request, publicURL: configuration.publicURL, secure: secure) ?? ""
        return PageContext(
            principal: signedIn.principal, csrfToken: signedIn.csrf, now: sync.seconds(sync.clock()), storage: sync.storage, publicURL: origin,
            request: request, parameters: parameters, notice: notice, sync: sync, console: self, sessionId: signedIn.id,
            tokenHash: signedIn.tokenHash)
    }

    /// The CSRF token (field `csrf` or header `X-CSRF-Token`) is the session's, and the request comes from
    /// the console's own origin.
    func checkForgery(_ request: HTTPRequest, form: FormFields, csrf: String) -> Bool {
        let presented = request.headers["x-csrf-token"].map { String(decoding: $0, as: UTF8.self) } ?? form["csrf"] ?? ""
        guard constantTimeEqual(Array(presented.utf8), Array(csrf.utf8)) else { return false }
        return isSameOrigin(request)
    }

    func isSameOrigin(_ request: HTTPRequest) -> Bool {
        let secure = RequestFacts.isSecure(request, trustedProxies: sync.configuration.trustedProxies)
        return RequestFacts.isSameOrigin(request, own: RequestFacts.ownOrigin(request, publicURL: configuration.publicURL, secure: secure))
    }

    // MARK: Answers

    /// A page's result as a response. `fetch`: the script posted it (`X-CSRF-Token`), so a redirect is 204
    /// and a refusal one line of text.
    func render(_ result: PageResult, page: ConsolePage, context: PageContext, fetch: Bool) -> HTTPResponse {
        switch result {
        case let .page(view):
            return html(view.status, Layout.page(view, context: context, pages: pages))
        case let .redirect(location, notice):
            if fetch { return HTTPResponse(status: 204, note: "console:done") }
            if let notice { sessions.setNotice(context.sessionId, notice) }
            return redirect(location)
        case let .refused(status, text):
            if fetch { return plain(status, text) }
            // A form-only page (the clicker's `…/advance`) shows the page it belongs to (`sessions/*`) again.
            let shows = page.get ?? pages.first { $0.get != nil && $0.path == Array(page.path.dropLast()) }?.get
            guard let get = shows, var view = try? get(context), case .page(var shown) = view else {
                return message(status, "Refused", text)
            }
            shown.status = status
            shown.error = text
            view = .page(shown)
            return render(view, page: page, context: context, fetch: false)
        case let .limited(retryAfter, text):
            var response = render(.refused(status: 429, message: text), page: page, context: context, fetch: fetch)
            response.headers.append(HTTPHeader("Retry-After", String(retryAfter)))
            return response
        case let .response(response):
            return response
        }
    }

    /// Runs `work` on an action thread and answers when it is done (503 when too many wait).
    func onActionThread(_ work: @escaping @Sendable () throws -> HTTPResponse) -> HTTPResponse {
        let later = HTTPDeferredResponse()
        let accepted = actions.submit { [self] in
            let response: HTTPResponse
            do {
                response = try work()
            } catch {
                sync.alarm("console: error in a form's action: \(error)")
                response = message(500, "Something went wrong", "The action could not be completed. The error is in the server's log.")
            }
            later.complete(SecurityHeaders.applied(to: response))
        }
        guard accepted else { return message(503, "Busy", "The console is busy. Try again in a moment.") }
        return HTTPResponse(later)
    }

    func html(_ status: Int, _ node: Node, headers: [HTTPHeader] = []) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [HTTPHeader("Content-Type", "text/html; charset=utf-8")] + headers, body: .bytes(node.render()),
            note: "console:\(status)")
    }

    func plain(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [HTTPHeader("Content-Type", "text/plain; charset=utf-8")], body: .bytes(Array(text.utf8)), note: "console:\(status)")
    }

    func redirect(_ location: String, headers: [HTTPHeader] = []) -> HTTPResponse {
        HTTPResponse(status: 303, headers: [HTTPHeader("Location", location)] + headers, note: "console:redirect")
    }

    func methodNotAllowed(_ allow: String) -> HTTPResponse {
        var response = message(405, "Method not allowed", "This address does not take that method.")
        response.headers.append(HTTPHeader("Allow", allow))
        return response
    }

    /// A page with one clear line: a bare one (not signed in), or inside the layout.
    func message(_ status: Int, _ title: String, _ line: String, signedIn: SignedIn? = nil, request: HTTPRequest? = nil) -> HTTPResponse {
        if let signedIn, let request {
            let context = makeContext(request, signedIn, parameters: [], notice: nil)
            let view = PageView(title: title, status: status) { p { line } }
            return html(status, Layout.page(view, context: context, pages: pages))
        }
        return html(status, Layout.frame(title: title, page: "message", events: nil) {
            main(.id("main"), .class("sign-in")) {
                h1 { title }
                p(.role(status >= 400 ? "alert" : "status")) { line }
                p { a(.href("/console/sign-in")) { "Go to sign-in" } }
            }
        })
    }

    func isRead(_ request: HTTPRequest) -> Bool { request.method == .get || request.method == .head }
}

extension RequestFacts {
    /// A request path for an alarm line, escaped (never raw bytes a terminal would act on), without its query.
    static func printablePath(_ request: HTTPRequest) -> String {
        DeviceText.escaped(String(decoding: SyncAPI.split(request.target).path.prefix(200), as: UTF8.self), quotes: false)
    }
}
