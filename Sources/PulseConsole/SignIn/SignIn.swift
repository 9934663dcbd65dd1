import PulseHTML
import PulseHTTPServer
import PulseServerStorage
import PulseSyncAPI

/// Sign-in, sign-out and the presenter link.
///
/// `POST /console/sign-in` takes `token` (the staff token, as typed or from a presenter link's fragment). It
/// must come from the console's own origin; attempts are rate-limited per client address (the sync server's
/// token buckets, `ConsoleConfiguration.signInLimit`). A token that resolves to a principal gets a new
/// console session (`ConsoleSessions`) in an HttpOnly, SameSite=Strict cookie on `/console` (`Secure` when
/// the request came over TLS through a trusted proxy), and a 303 to the principal's home page. The token is
/// never logged, never put in a URL, never shown again.
extension Console {
    func signInRoute(_ request: HTTPRequest) throws -> HTTPResponse {
        if isRead(request) { return signInPage(status: 200, error: nil) }
        guard request.method == .post else { return methodNotAllowed("GET, POST") }
        guard isSameOrigin(request) else {
            return signInPage(status: 403, error: "This sign-in did not come from the console's own page.")
        }
        let now = sync.clock()
        let client = sync.clientAddress(of: request)?.description ?? "unknown"
        if case let .limited(retryAfter) = try sync.storage.takeRateToken("console-sign-in:" + client, limit: configuration.signInLimit, at: now) {
            var response = signInPage(status: 429, error: "Too many sign-in attempts from this address. Wait \(retryAfter) seconds and try again.")
            response.headers.append(HTTPHeader("Retry-After", String(retryAfter)))
            return response
        }
        let form = FormFields(body: request.body) ?? FormFields()
        guard let token = form.text("token"), CredentialSecret.isTokenShaped(token), let hash = CredentialSecret.hash(token),
              let principal = try principal(tokenHash: hash, now: sync.seconds(now))
        else {
            return signInPage(status: 401, error: "That staff token is not valid. Check it and try again.")
        }
        let session = try sessions.create(tokenHash: hash, now: now)
        let secure = RequestFacts.isSecure(request, trustedProxies: sync.configuration.trustedProxies)
        var response = redirect(home(for: principal), headers: [RequestFacts.sessionCookieHeader(session.id, secure: secure)])
        response.note = "console:signed-in"
        return response
    }

    /// `POST /console/sign-out`: ends the session (with its CSRF token and the own origin, like any change).
    func signOut(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == .post else { return methodNotAllowed("POST") }
        let secure = RequestFacts.isSecure(request, trustedProxies: sync.configuration.trustedProxies)
        guard let id = RequestFacts.sessionCookie(request), let entry = sessions.resolve(id, now: sync.clock()) else {
            return redirect("/console/sign-in", headers: [RequestFacts.clearedCookieHeader(secure: secure)])
        }
        let form = FormFields(body: request.body) ?? FormFields()
        guard checkForgery(request, form: form, csrf: entry.csrfToken) else {
            return message(403, "Refused", "This request did not come from the console's own page: nothing was changed.")
        }
        sessions.end(id)
        return redirect("/console/sign-in", headers: [RequestFacts.clearedCookieHeader(secure: secure)])
    }

    func signInPage(status: Int, error: String?) -> HTTPResponse {
        html(status, Layout.frame(title: "Sign in", page: "sign-in", events: nil) {
            main(.id("main"), .class("sign-in")) {
                h1 { "Pulse console" }
                if let error { p(.class("error"), .role("alert")) { error } }
                form(.method("post"), .action("/console/sign-in")) {
                    div(.class("field")) {
                        label(.for("token")) { "Staff token" }
                        input(.type("password"), .id("token"), .name("token"), .autocomplete("current-password"), .required(), Attribute("spellcheck", "false"))
                    }
                    button(.type("submit")) { "Sign in" }
                }
                p(.class("muted")) { "Presenters: open the presenter link you were given; it signs you in." }
            }
        })
    }

    /// `GET /console/present#<token>`: the token is in the fragment, which no browser sends; the script reads
    /// it, removes it from the address bar and history, and posts it once to sign-in.
    func presentPage() -> HTTPResponse {
        html(200, Layout.frame(title: "Presenter", page: "present", events: nil) {
            main(.id("main"), .class("sign-in")) {
                h1 { "Presenter sign-in" }
                p(.id("present-status"), .role("status")) { "Signing you in…" }
                form(.method("post"), .action("/console/sign-in"), .id("present-form")) {
                    div(.class("field")) {
                        label(.for("token")) { "Staff token" }
                        input(.type("password"), .id("token"), .name("token"), .autocomplete("off"), .required())
                    }
                    button(.type("submit")) { "Sign in" }
                }
            }
        })
    }
}
