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

    /// Every console answer carries the headers, pages `no-store`, and no page has inline script or style:
    /// every page of the console, with a device (named as an attacker would) on the lists, a live view, a
    /// report, a revoke confirmation and the answers that show a minted secret once.
    @Test func everyPageHasTheSecurityHeadersAndNoInlineScriptOrStyle() throws {
        let harness = try PagesHarness()
        let phone = try harness.enroll(.session("keynote"), name: PagesHarness.hostileName)
        #expect(try harness.diag(phone, session: "keynote", build: PagesHarness.hostileBuild, rtt: 30) == 204)
        let signedIn = [
            "/console/sessions", "/console/sessions/keynote", "/console/sessions/nope", "/console/nothing-here", "/console",
            "/console/companion", "/console/staff-tokens", "/console/devices", "/console/devices?q=img", "/console/devices/\(phone.id)/revoke",
            "/console/live", "/console/sessions/keynote/live", "/console/sessions/keynote/report", "/console/sessions/keynote/report/csv",
            "/console/audit",
        ]
        var answers: [(String, RawHTTPResponse)] = try signedIn.map { ($0, try harness.get($0)) }
        for path in ["/console/sign-in", "/console/present", "/console/enroll", "/console/sessions", "/console/assets/0000.js"] {
            answers.append((path + " (signed out)", try harness.client().request("GET", path)))
        }
        answers.append(("minted device code", try harness.post("/console/companion", [("do", "code"), ("scope", "session:keynote"), ("expires", "3600")])))
        answers.append(("minted attendee link", try harness.post("/console/companion", [("do", "link"), ("series", "devconf-2026"), ("expires", "3600")])))
        answers.append(("minted presenter token", try harness.post(
            "/console/staff-tokens", [("do", "mint"), ("role", "presenter"), ("session", "keynote"), ("expires", "43200")])))
        answers.append(("a refused form", try harness.post("/console/staff-tokens", [("do", "mint"), ("role", "presenter"), ("expires", "43200")])))
        for (path, response) in answers {
            #expect(response.status < 500, "\(path): \(response.status)")
            #expect(response.header("content-security-policy") == Self.csp, "\(path)")
            #expect(response.header("x-content-type-options") == "nosniff", "\(path)")
            #expect(response.header("referrer-policy") == "no-referrer", "\(path)")
            #expect(response.header("cache-control") == "no-store", "\(path)")
            guard !path.hasSuffix("/csv") else { continue }  // text/csv: the device's strings as the text they are
            let html = response.text
            #expect(!html.contains("<style"), "\(path)")
            #expect(!html.contains(" style="), "\(path)")
            // Attribute values are always double-quoted, with quotes inside escaped: a device's name in an
            // aria-label is a value, not an attribute, so values are left out of the search for handlers.
            let tags = html.replacingOccurrences(of: #""[^"]*""#, with: #""""#, options: .regularExpression)
            #expect(tags.range(of: #"<[^>]*\son[a-z]+\s*="#, options: .regularExpression) == nil, "\(path): an event handler attribute")
            #expect(!html.contains(PagesHarness.hostileName) && !html.contains("<script>alert"), "\(path): markup of a device")
            // Every <script> is an external, hashed one.
            for part in html.components(separatedBy: "<script").dropFirst() {
                #expect(part.hasPrefix(#" src="/console/assets/"#), "\(path): \(part.prefix(60))")
                #expect(part.contains("></script>"), "\(path)")
                #expect(part.components(separatedBy: "></script>")[0].contains(">") == false, "\(path): inline code")
            }
        }
        #expect(answers.filter { $0.1.status == 200 }.count >= 18)
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
