import Foundation
import PulseServerStorage
import PulseSystem
import SyncTestSupport
import Testing

@Suite struct SignInTests {
    @Test func signInSetsAStrictHttpOnlyCookieAndSignOutEndsTheSession() throws {
        let harness = try ConsoleHarness()
        let token = try harness.server.staffToken()
        let (cookie, response) = try harness.signIn(token)
        #expect(response.status == 303)
        #expect(response.header("location") == "/console/sessions")
        let id = try #require(cookie)
        #expect(id.utf8.count == 43, "256 random bits, base64url")
        let line = try #require(response.header("set-cookie"))
        #expect(line.contains("; HttpOnly"))
        #expect(line.contains("; SameSite=Strict"))
        #expect(line.contains("; Path=/console"))
        #expect(!line.contains("Secure"), "plain HTTP from an untrusted peer")
        #expect(!line.contains(token), "the cookie holds a session id, never the token")
        #expect(!(response.header("location") ?? "").contains(token))

        let page = try harness.get("/console/sessions", cookie: id)
        #expect(page.status == 200)
        #expect(page.text.contains("Sign out"))
        let csrf = try #require(ConsoleHarness.csrf(page.text))

        let out = try harness.post("/console/sign-out", [("csrf", csrf)], cookie: id)
        #expect(out.status == 303)
        #expect(out.header("set-cookie")?.contains("Max-Age=0") == true)
        let after = try harness.get("/console/sessions", cookie: id)
        #expect(after.status == 303)
        #expect(after.header("location") == "/console/sign-in")
    }

    @Test func aWrongTokenIsRefusedWithOneLine() throws {
        let harness = try ConsoleHarness()
        let (cookie, response) = try harness.signIn("not-a-token")
        #expect(cookie == nil)
        #expect(response.status == 401)
        #expect(response.text.contains("That staff token is not valid"))
        let page = try harness.get("/console/sign-in")
        #expect(page.text.contains(#"<label for="token">Staff token</label>"#))
        #expect(page.text.contains(#"type="password""#))
        #expect(page.text.contains(">Sign in</button>"))
    }

    @Test func theCookieIsSecureThroughATrustedProxyThatSaysHTTPS() throws {
        let harness = try ConsoleHarness { $0.trustedProxies = [try! IPNetwork(parsing: "127.0.0.0/8")] }
        let token = try harness.server.staffToken()
        let secure = try harness.post(
            "/console/sign-in", [("token", token)], origin: .some("https://127.0.0.1:\(harness.port)"), headers: [("X-Forwarded-Proto", "https")])
        #expect(secure.status == 303)
        #expect(secure.header("set-cookie")?.contains("; Secure") == true)
        // The same proxy without https: no Secure (and the http origin matches).
        let plain = try harness.post("/console/sign-in", [("token", token)])
        #expect(plain.status == 303)
        #expect(plain.header("set-cookie")?.contains("Secure") == false)
    }

    @Test func anUntrustedPeerSayingHTTPSGetsNoSecureCookie() throws {
        let harness = try ConsoleHarness()
        let token = try harness.server.staffToken()
        let response = try harness.post("/console/sign-in", [("token", token)], headers: [("X-Forwarded-Proto", "https")])
        #expect(response.status == 303)
        #expect(response.header("set-cookie")?.contains("Secure") == false)
    }

    @Test func revokingTheTokenEndsTheSessionAtOnce() throws {
        let harness = try ConsoleHarness()
        let minted = try harness.server.administration.createStaffToken()
        let cookie = try #require(try harness.signIn(minted.text).cookie)
        #expect(try harness.get("/console/sessions", cookie: cookie).status == 200)
        _ = try harness.server.administration.revokeToken(minted.listingId, withDevices: false)
        let after = try harness.get("/console/sessions", cookie: cookie)
        #expect(after.status == 303)
        #expect(after.header("location") == "/console/sign-in")
    }

    @Test func signInAttemptsAreRateLimitedPerClientAddress() throws {
        let harness = try ConsoleHarness()
        var statuses: [Int] = []
        for _ in 0..<12 { statuses.append(try harness.signIn("wrong", source: "127.0.0.2").response.status) }
        #expect(statuses.prefix(10).allSatisfy { $0 == 401 })
        let limited = try harness.signIn("wrong", source: "127.0.0.2").response
        #expect(limited.status == 429)
        #expect(limited.header("retry-after") != nil)
        #expect(limited.text.contains("Too many sign-in attempts from this address."))
        // Even the right token waits, and another address does not.
        let token = try harness.server.staffToken()
        #expect(try harness.signIn(token, source: "127.0.0.2").response.status == 429)
        #expect(try harness.signIn(token, source: "127.0.0.3").response.status == 303)
    }

    @Test func signInFromAnotherOriginIsRefused() throws {
        let harness = try ConsoleHarness()
        let token = try harness.server.staffToken()
        let response = try harness.post("/console/sign-in", [("token", token)], origin: .some("http://127.0.0.1:1"))
        #expect(response.status == 403)
        #expect(ConsoleHarness.cookie(response) == nil)
    }

    @Test func thePresenterLinkPageKeepsTheTokenOutOfTheServer() throws {
        let harness = try ConsoleHarness()
        let page = try harness.get("/console/present")
        #expect(page.status == 200)
        #expect(page.text.contains(#"data-page="present""#))
        #expect(page.text.contains(#"action="/console/sign-in""#))
        #expect(page.header("cache-control") == "no-store")
    }
}
