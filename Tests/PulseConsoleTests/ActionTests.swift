import Foundation
import PulseServerStorage
import PulseSyncAPI
import PulseSystem
import SyncTestSupport
import Testing

@Suite struct ActionTests {
    /// A state button posts through the staff API: 303 back with a one-time notice, the change made and
    /// audited as the console's token.
    @Test func aStateButtonChangesTheSessionThroughTheStaffAPI() throws {
        let harness = try ConsoleHarness()
        let (cookie, csrf) = try harness.admin()
        let response = try harness.post("/console/sessions/keynote", [("csrf", csrf), ("action", "state"), ("state", "live")], cookie: cookie)
        #expect(response.status == 303)
        #expect(response.header("location") == "/console/sessions/keynote")
        #expect(try harness.storage.session(id: "keynote")?.state == .live)
        let audit = try harness.storage.auditEntries(after: 0, since: nil, limit: 100)
        #expect(audit.contains { $0.entry.target == "keynote" && $0.entry.actor.role == "admin" })
        let page = try harness.get("/console/sessions/keynote", cookie: cookie).text
        #expect(page.contains("The session is now live."))
        #expect(!(try harness.get("/console/sessions/keynote", cookie: cookie).text.contains("The session is now live.")), "shown once")
    }

    /// The clicker as the script posts it (`X-CSRF-Token`): 204, the frontier moves; a refusal is one line.
    @Test func nextSlideAdvancesTheFrontierAndARefusalIsOneLine() throws {
        let harness = try ConsoleHarness()
        let (cookie, csrf) = try harness.admin()
        let early = try harness.post("/console/sessions/keynote/advance", [("slide", "0")], cookie: cookie, headers: [("X-CSRF-Token", csrf)])
        #expect(early.status == 409)
        #expect(early.header("content-type") == "text/plain; charset=utf-8")
        #expect(!early.text.isEmpty && !early.text.contains("<"))
        try harness.server.set("keynote", SessionUpdate(state: .live))
        for slide in 0...2 {
            let response = try harness.post("/console/sessions/keynote/advance", [("slide", "\(slide)")], cookie: cookie, headers: [("X-CSRF-Token", csrf)])
            #expect(response.status == 204)
        }
        #expect(try harness.storage.session(id: "keynote")?.maxShown == 2)
        let page = try harness.get("/console/sessions/keynote", cookie: cookie).text
        #expect(page.contains("Slide 3 of "))
        #expect(page.contains(#"name="slide" value="3""#), "the next press asks for slide 3")
        // A plain form post (no script): 303 back.
        let form = try harness.post("/console/sessions/keynote/advance", [("csrf", csrf), ("slide", "3")], cookie: cookie)
        #expect(form.status == 303)
        #expect(try harness.storage.session(id: "keynote")?.maxShown == 3)
    }

    /// A presenter remote sending PageDown faster than the staff API takes a presenter's changes: past the burst
    /// the script's post is 429 with `Retry-After` and one line saying it goes too fast (the script waits that
    /// long, then sends the last slide pressed); a refused press moves nothing. Without the script the form's
    /// post gets the clicker page again with that line.
    @Test func tooFastPressesAre429WithRetryAfterAndOneLine() throws {
        let harness = try ConsoleHarness(configure: { $0.staffChangeLimit = RateLimit(rate: 0.2, burst: 5) })
        try harness.server.set("keynote", SessionUpdate(state: .live))
        let token = try harness.server.administration.createStaffToken(role: .presenter, session: "keynote").text
        let cookie = try #require(try harness.signIn(token).cookie)
        let csrf = try #require(ConsoleHarness.csrf(try harness.get("/console/sessions/keynote", cookie: cookie).text))
        var answers: [RawHTTPResponse] = []
        for slide in 0..<12 {
            answers.append(try harness.post("/console/sessions/keynote/advance", [("slide", "\(slide)")], cookie: cookie, headers: [("X-CSRF-Token", csrf)]))
        }
        #expect(answers.prefix(5).allSatisfy { $0.status == 204 }, "\(answers.map(\.status))")
        #expect(answers.allSatisfy { $0.status == 204 || $0.status == 429 }, "\(answers.map(\.status))")
        let limited = try #require(answers.first { $0.status == 429 }, "never too fast: \(answers.map(\.status))")
        let seconds = try #require(limited.header("retry-after").flatMap { Int($0) })
        #expect((1...3600).contains(seconds))
        #expect(limited.header("content-type") == "text/plain; charset=utf-8")
        #expect(limited.text.hasPrefix("Going too fast") && !limited.text.contains("<"), "\(limited.text)")
        // A refused press moved nothing: the frontier is the last press that went through.
        let lastSent = try #require(answers.lastIndex { $0.status == 204 })
        #expect(try harness.storage.session(id: "keynote")?.maxShown == lastSent)
        // The plain form (no script): the clicker again, with the line, 429 and Retry-After.
        let form = try harness.post("/console/sessions/keynote/advance", [("csrf", csrf), ("slide", "13")], cookie: cookie)
        #expect(form.status == 429 && form.header("retry-after") != nil)
        #expect(form.text.contains(#"role="alert""#) && form.text.contains("Going too fast") && form.text.contains(">Next slide</button>"))
        #expect(try harness.storage.session(id: "keynote")?.maxShown == lastSent)
    }

    /// A presenter lands on their own session, sees the clicker and Go live / End session only, cannot open
    /// another session or the sessions list, and what the staff API forbids stays forbidden.
    @Test func aPresenterSeesOnlyTheirSessionAndTheirButtons() throws {
        let harness = try ConsoleHarness()
        let token = try harness.server.administration.createStaffToken(role: .presenter, session: "keynote").text
        let (cookie, signIn) = try harness.signIn(token)
        let id = try #require(cookie)
        #expect(signIn.header("location") == "/console/sessions/keynote")
        let page = try harness.get("/console/sessions/keynote", cookie: id)
        #expect(page.status == 200)
        let html = page.text
        #expect(html.contains(">Next slide</button>"))
        #expect(html.contains(">Go live</button>"))
        #expect(html.contains(">End session</button>"))
        #expect(!html.contains(">Set scheduled</button>"))
        #expect(!html.contains(">Start rehearsal</button>"))
        #expect(!html.contains("Save rules"))
        #expect(!html.contains(">Sessions</a>"), "no sessions list in the navigation")
        #expect(try harness.get("/console/sessions", cookie: id).status == 403)
        #expect(try harness.get("/console/sessions/workshop", cookie: id).status == 404)
        let csrf = try #require(ConsoleHarness.csrf(html))
        // Rules are not the presenter's: the staff API answers 403, the page shows its line, nothing changes.
        let before = try harness.storage.session(id: "keynote")
        let rules = try harness.post("/console/sessions/keynote", [("csrf", csrf), ("action", "rules"), ("allowDownload", "on")], cookie: id)
        #expect(rules.status == 403)
        #expect(rules.text.contains("may not"))
        #expect(try harness.storage.session(id: "keynote") == before)
        let other = try harness.post("/console/sessions/workshop", [("csrf", csrf), ("action", "state"), ("state", "live")], cookie: id)
        #expect(other.status == 403)
        #expect(try harness.storage.session(id: "workshop")?.state != .live)
        // Go live is theirs.
        let live = try harness.post("/console/sessions/keynote", [("csrf", csrf), ("action", "state"), ("state", "live")], cookie: id)
        #expect(live.status == 303)
        #expect(try harness.storage.session(id: "keynote")?.state == .live)
    }

    /// The console's stream sends the clicker's values at once and again after an advance made anywhere.
    @Test func theClickerStreamUpdatesLiveAfterAnAdvance() throws {
        let harness = try ConsoleHarness()
        let (cookie, _) = try harness.admin()
        try harness.server.set("keynote", SessionUpdate(state: .live))
        let connection = try harness.client()
        try connection.send("GET /console/sessions/keynote/events HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: pulse_console=\(cookie)\r\n\r\n")
        let head = try connection.readHead()
        #expect(head.status == 200)
        #expect(head.header("content-type") == "text/event-stream")
        #expect(head.header("content-security-policy") != nil)
        var text = ""
        func read(until needle: String) -> Bool {
            while !text.contains(needle) {
                guard let chunk = try? connection.readChunk() else { return false }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return true
        }
        #expect(read(until: "Slide 0 of "))
        try harness.server.advance("keynote", to: 4)
        #expect(read(until: "Slide 5 of "), "\(text)")
        #expect(text.contains("event: clicker"))
    }
}
