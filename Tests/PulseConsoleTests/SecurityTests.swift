import Foundation
import PulseConsole
import PulseCrypto
import PulseServerStorage
import PulseSystem
import SyncTestSupport
import Testing

@Suite struct SecurityTests {
    static let csp =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// A state change without the CSRF token, with another session's, or from another origin is 403 and
    /// changes nothing; with all three right, the same request goes through to the staff API.
    @Test func aForgedStateChangeIsRefusedAndChangesNothing() throws {
        let harness = try ConsoleHarness()
        let (cookie, csrf) = try harness.admin()
        let other = try harness.admin()
        let before = try #require(try harness.storage.session(id: "keynote"))
        let form = [("action", "state"), ("state", "live")]
        let attempts: [(String, RawHTTPResponse)] = [
            ("no token", try harness.post("/console/sessions/keynote", form, cookie: cookie)),
            ("wrong token", try harness.post("/console/sessions/keynote", form + [("csrf", "x" + csrf.dropFirst())], cookie: cookie)),
            ("another session's token", try harness.post("/console/sessions/keynote", form + [("csrf", other.csrf)], cookie: cookie)),
            ("another origin", try harness.post("/console/sessions/keynote", form + [("csrf", csrf)], cookie: cookie, origin: .some("http://127.0.0.1:9"))),
            ("Origin null, cross-site", try harness.post(
                "/console/sessions/keynote", form + [("csrf", csrf)], cookie: cookie, origin: .some("null"), headers: [("Sec-Fetch-Site", "cross-site")])),
            ("no Origin, no Referer", try harness.post("/console/sessions/keynote", form + [("csrf", csrf)], cookie: cookie, origin: .none)),
            ("a Referer elsewhere", try harness.post(
                "/console/sessions/keynote", form + [("csrf", csrf)], cookie: cookie, origin: .none, headers: [("Referer", "http://evil.example/x")])),
            ("no cookie", try harness.post("/console/sessions/keynote", form + [("csrf", csrf)])),
            ("header token from another origin", try harness.post(
                "/console/sessions/keynote/advance", [("slide", "3")], cookie: cookie, origin: .some("http://evil.example"), headers: [("X-CSRF-Token", csrf)])),
        ]
        for (name, response) in attempts {
            #expect(response.status == 403, "\(name): \(response.status)")
            #expect(response.header("content-security-policy") == Self.csp, "\(name)")
        }
        #expect(try harness.storage.session(id: "keynote") == before, "nothing changed")
        #expect(try harness.storage.auditEntries(after: 0, since: nil, limit: 100).allSatisfy { $0.entry.target != "keynote" })

        // The same-origin fallbacks pass the origin check (they then reach the action).
        let fallback = try harness.post(
            "/console/sessions/keynote", form + [("csrf", csrf)], cookie: cookie, origin: .some("null"), headers: [("Sec-Fetch-Site", "same-origin")])
        #expect(fallback.status != 403)
        let referer = try harness.post(
            "/console/sessions/keynote", form + [("csrf", csrf)], cookie: cookie, origin: .none, headers: [("Referer", harness.origin + "/console/sessions/keynote")])
        #expect(referer.status != 403)
    }

    /// Every console answer carries the headers, pages `no-store`, and no page has inline script or style.
    @Test func everyPageHasTheSecurityHeadersAndNoInlineScriptOrStyle() throws {
        let harness = try ConsoleHarness()
        let (cookie, _) = try harness.admin()
        let pages: [(String, String?)] = [
            ("/console/sign-in", nil), ("/console/present", nil), ("/console/sessions", cookie), ("/console/sessions/keynote", cookie),
            ("/console/sessions/nope", cookie), ("/console/nothing-here", cookie), ("/console/sessions", nil), ("/console", cookie),
            ("/console/assets/0000.js", nil),
        ]
        for (path, cookie) in pages {
            let response = try harness.get(path, cookie: cookie)
            #expect(response.header("content-security-policy") == Self.csp, "\(path)")
            #expect(response.header("x-content-type-options") == "nosniff", "\(path)")
            #expect(response.header("referrer-policy") == "no-referrer", "\(path)")
            #expect(response.header("cache-control") == "no-store", "\(path)")
            let html = response.text
            #expect(!html.contains("<style"), "\(path)")
            #expect(!html.contains(" style="), "\(path)")
            #expect(html.range(of: #"<[^>]*\son[a-z]+\s*="#, options: .regularExpression) == nil, "\(path): an event handler attribute")
            // Every <script> is an external, hashed one.
            for part in html.components(separatedBy: "<script").dropFirst() {
                #expect(part.hasPrefix(#" src="/console/assets/"#), "\(path): \(part.prefix(60))")
                #expect(part.contains("></script>"), "\(path)")
                #expect(part.components(separatedBy: "></script>")[0].contains(">") == false, "\(path): inline code")
            }
        }
    }

    @Test func theAssetsAreNamedByTheHashOfTheirBytesAndImmutable() throws {
        let harness = try ConsoleHarness()
        let sign = try harness.get("/console/sign-in").text
        for asset in ConsoleAssets.all {
            #expect(sign.contains(asset.path))
            let response = try harness.get(asset.path)
            #expect(response.status == 200)
            let hex = SHA256.hex(response.body)
            #expect(asset.path.hasPrefix("/console/assets/" + hex + "."), "the URL names the served bytes")
            #expect(response.header("cache-control") == "public, max-age=31536000, immutable")
            #expect(response.header("content-security-policy") == Self.csp)
            #expect(response.header("x-content-type-options") == "nosniff")
        }
        #expect(try harness.get(ConsoleAssets.script.path).header("content-type") == "text/javascript; charset=utf-8")
        #expect(try harness.get(ConsoleAssets.styleSheet.path).header("content-type") == "text/css; charset=utf-8")
    }
}
