import Foundation
import PulseCore
import PulseCrypto
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing

/// The outcomes `theServerCountsEnrollmentsKeysAndRefusalsByReason` does not reach, each moved by the real server:
/// keys answers that release keys (a nonzero bucket of the histogram), a device's rate limit, enrollments refused
/// for a bad token and a bad key, and the staff API's and the console's refusals by their own reasons (they were
/// all `other`).
@Suite(.serialized) struct MetricsOutcomeTests {
    static func now() -> Int64 { MetricsServeTests.now() }

    /// `POST` a console form (or sign in) from the console's own origin.
    static func consolePost(_ server: MetricsProcess, _ path: String, _ form: String, cookie: String? = nil) throws -> RawHTTPResponse {
        var headers = [("Origin", "http://127.0.0.1:\(server.port)"), ("Content-Type", "application/x-www-form-urlencoded")]
        if let cookie { headers.append(("Cookie", cookie)) }
        return try server.client().request("POST", path, headers, body: Array(form.utf8))
    }

    static func signIn(_ server: MetricsProcess, token: String) throws -> String {
        let answer = try consolePost(server, "/console/sign-in", "token=" + token)
        let cookie = try #require(answer.header("set-cookie"), "sign-in answered \(answer.status)")
        return String(cookie.prefix { $0 != ";" })
    }

    @Test func releasedKeysRateLimitsBadEnrollmentsAndStaffAndConsoleRefusalsAreCounted() throws {
        let folder = try TestFolder()
        let (data, _, code) = try MetricsServeTests.event(in: folder)
        let admin = try #require(CLI.run(["admin", "staff-token", "create", "--data", data]).out.first)
        let presenter = try #require(CLI.run(["admin", "staff-token", "create", "--data", data, "--role", "presenter", "--session", "keynote"]).out.first)
        let server = try MetricsProcess("pulse-server", ["serve", "--data", data, "--access-log", "off"])
        let bearer = [("Authorization", "Bearer " + admin)]

        // Enrollments: a token that is none, a key that is none, then one that enrolls.
        let badToken = try server.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: "AAAA-BBBB-CCCC", key: try P256.PrivateKey()))
        #expect(badToken.status == 404)
        let badKey = try server.client().request(
            "POST", "/api/sync/enroll", body: Array(#"{"token":"\#(code)","publicKey":"AAAA","platform":"ios","name":"phone"}"#.utf8))
        #expect(badKey.status == 400 && badKey.json?["error"] == "badKey", "\(badKey.text)")
        let device = try MetricsServeTests.enroll(server, code: code)

        // Keys released: the keynote live and advanced to its third slide, then one keys answer.
        let json = [("Content-Type", "application/json")]
        #expect(try server.client().request("PATCH", "/api/staff/sessions/keynote", bearer + json, body: Array(#"{"state":"live"}"#.utf8)).status == 200)
        #expect(try server.client().request("POST", "/api/staff/sessions/keynote/advance", bearer + json, body: Array(#"{"maxShown":2}"#.utf8)).status == 200)
        let keys = try server.client().signed("GET", "/api/sync/keys?session=keynote", by: device, at: Self.now())
        let released = try #require(keys.json?["released"]?.arrayValue?.count, "\(keys.text)")
        #expect(keys.status == 200 && released == 3, "\(keys.text)")

        // The device's rate limit (5 a second, bursts of 10): 20 at once, some refused.
        var limited = 0
        for _ in 0..<20 where try server.client().signed("GET", "/api/sync/keys?session=keynote", by: device, at: Self.now()).status == 429 {
            limited += 1
        }
        #expect(limited > 0)

        // The staff API: a presenter may not mint codes; an admin asks for a session that does not exist.
        let forbidden = try server.client().request(
            "POST", "/api/staff/device-codes", [("Authorization", "Bearer " + presenter)] + json, body: Array(#"{"session":"keynote"}"#.utf8))
        #expect(forbidden.status == 403 && forbidden.json?["error"] == "forbidden", "\(forbidden.text)")
        #expect(try server.client().request("GET", "/api/staff/sessions/no-such-talk", bearer).status == 404)

        // The console: a form posted without its CSRF token, a page a presenter may not open, a page that is none,
        // a sign-in with a token that is none.
        let cookie = try Self.signIn(server, token: admin)
        #expect(try Self.consolePost(server, "/console/sessions/keynote/advance", "slide=3", cookie: cookie).status == 403)
        let presenterCookie = try Self.signIn(server, token: presenter)
        #expect(try server.client().request("GET", "/console/sessions", [("Cookie", presenterCookie)]).status == 403)
        #expect(try server.client().request("GET", "/console/no-such-page", [("Cookie", cookie)]).status == 404)
        #expect(try Self.consolePost(server, "/console/sign-in", "token=" + String(repeating: "A", count: 43)).status == 401)

        let expected: [(String, Double)] = [
            (#"pulse_enrollments_total{result="enrolled"}"#, 1),
            (#"pulse_enrollments_total{result="bad-token"}"#, 1),
            (#"pulse_enrollments_total{result="bad-request"}"#, 1),
            (#"pulse_sync_refusals_total{reason="bad-token"}"#, 1),
            (#"pulse_sync_refusals_total{reason="bad-request"}"#, 1),
            (#"pulse_sync_refusals_total{reason="rate-limited"}"#, Double(limited)),
            // The keys answers before the limit: the first one released 3 keys, every one of them 3.
            (#"pulse_keys_released_per_answer_bucket{le="0"}"#, 0),
            (#"pulse_keys_released_per_answer_bucket{le="2"}"#, 0),
            (#"pulse_keys_released_per_answer_bucket{le="5"}"#, Double(21 - limited)),
            (#"pulse_keys_released_per_answer_sum"#, Double(3 * (21 - limited))),
            (#"pulse_sync_refusals_total{reason="forbidden"}"#, 2),  // the staff API's and the console page's
            (#"pulse_sync_refusals_total{reason="csrf"}"#, 1),
            (#"pulse_sync_refusals_total{reason="not-found"}"#, 2),  // the staff API's and the console's
            (#"pulse_sync_refusals_total{reason="staff-unauthorized"}"#, 1),
            (#"pulse_sync_refusals_total{reason="other"}"#, 0),
            (#"pulse_http_requests_total{route="/console/*",status="4xx"}"#, 4),
            (#"pulse_http_requests_total{route="/console/*",status="3xx"}"#, 2),  // the two sign-ins
        ]
        let text = try server.scrape(settledOn: expected)
        for (series, value) in expected {
            #expect(Scrape.value(text, series) == value, "\(series): \(Scrape.value(text, series).map { "\($0)" } ?? "absent")")
        }
    }
}
