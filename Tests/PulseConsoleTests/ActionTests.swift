import Foundation
import PulseServerStorage
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
