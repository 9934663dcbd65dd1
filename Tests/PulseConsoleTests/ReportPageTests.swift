import Foundation
import PulseCore
import PulseServerStorage
import Testing
@testable import PulseConsole

/// The report: four charts with their tables, hostile strings as text in the page and guarded in the CSV.
@Suite struct ReportPageTests {
    @Test func chartsHaveTitlesDescriptionsAndTablesAndHostileStringsAreText() throws {
        let harness = try PagesHarness()
        let hostile = try harness.enroll(.session("keynote"), name: PagesHarness.hostileName)
        let calm = try harness.enroll(.session("keynote"), name: "=cmd|' /C calc'!A0")
        #expect(try harness.diag(hostile, session: "keynote", build: PagesHarness.hostileBuild, rtt: 40) == 204)
        #expect(try harness.diag(hostile, session: "keynote", build: PagesHarness.hostileBuild, rtt: 60, online: false) == 204)
        #expect(try harness.diag(calm, session: "keynote", build: "2.1.0", rtt: 250) == 204)

        let page = try harness.get("/console/sessions/keynote/report")
        #expect(page.status == 200, "\(page.text)")
        let text = page.text
        #expect(text.contains("2 devices, 3 samples"))
        for title in ["Devices over time", "RTT distribution", "App builds", "Offline share"] {
            #expect(text.contains("<title>\(title)</title>"), "\(title)")
            #expect(text.contains("<caption>\(title)</caption>"), "\(title)")
        }
        #expect(text.components(separatedBy: #"role="img""#).count - 1 == 4)
        #expect(text.components(separatedBy: "<desc>").count - 1 == 4)
        #expect(text.contains("<desc>1 of 3 samples (33 %) said the device was offline.</desc>"))
        // RTT: the hostile phone's median is 50 ms, the other's 250 ms.
        #expect(text.contains(#"<th scope="row"><bdi>50–99 ms</bdi></th><td class="num">1</td>"#))
        #expect(text.contains(#"<th scope="row"><bdi>200–499 ms</bdi></th><td class="num">1</td>"#))
        #expect(!text.contains(PagesHarness.hostileName) && !text.contains("<script>alert"))
        #expect(text.contains("&lt;img src=x onerror=alert(1)&gt;"))
        #expect(text.contains(#"href="/console/sessions/keynote/report/csv""#) && text.contains("Download CSV"))

        let csv = try harness.get("/console/sessions/keynote/report/csv")
        #expect(csv.status == 200)
        #expect(csv.header("content-type") == "text/csv; charset=utf-8")
        #expect(csv.header("content-security-policy")?.contains("default-src 'none'") == true)
        #expect(csv.text.hasPrefix("deviceId,name,platform,build"))
        #expect(csv.text.contains("\"'=cmd|' /C calc'!A0\""), "\(csv.text)")
        #expect(csv.text.contains(PagesHarness.hostileName))  // text in a CSV, not markup: what the device sent
        #expect(try harness.get("/console/sessions/nope/report").status == 404)
    }

    /// The report is made once and kept while nothing changed; a new sample or a state change makes it again.
    @Test func theReportIsKeptUntilASampleOrTheSessionChanges() throws {
        let harness = try PagesHarness()
        let phone = try harness.enroll(.session("keynote"), name: "Phone")
        #expect(try harness.diag(phone, session: "keynote", build: "2.0.0", rtt: 40) == 204)
        #expect(try harness.get("/console/sessions/keynote/report").text.contains("1 devices, 1 samples, state "))
        #expect(try harness.get("/console/sessions/keynote/report").text.contains("1 devices, 1 samples, state "))
        #expect(try harness.diag(phone, session: "keynote", build: "2.0.1", rtt: 50) == 204)
        let again = try harness.get("/console/sessions/keynote/report").text
        #expect(again.contains("1 devices, 2 samples, state ") && again.contains("2.0.1"))
        #expect(!again.contains("state ended"))
        _ = try harness.storage.updateSession(id: "keynote", SessionUpdate(state: .ended), at: 2_000_000_000, audit: [])
        #expect(try harness.get("/console/sessions/keynote/report").text.contains("2 samples, state ended"))
    }

    /// While the session is live, samples arrive all the time: the report is kept for a few seconds even so,
    /// and says when it was made; once the session ends a new sample shows at once.
    @Test func aLiveSessionsReportIsKeptForAFewSecondsAndSaysWhenItWasMade() throws {
        let harness = try PagesHarness()
        _ = try harness.storage.updateSession(id: "keynote", SessionUpdate(state: .live), at: 1_000_000_000, audit: [])
        let phone = try harness.enroll(.session("keynote"), name: "Phone")
        #expect(try harness.diag(phone, session: "keynote", build: "2.0.0", rtt: 40) == 204)
        let first = try harness.get("/console/sessions/keynote/report").text
        #expect(first.contains("1 devices, 1 samples, state live") && first.contains("As of <time datetime=\"") && first.contains("The session is live"))
        #expect(try harness.diag(phone, session: "keynote", build: "2.0.1", rtt: 50) == 204)
        #expect(try harness.get("/console/sessions/keynote/report").text == first)
        _ = try harness.storage.updateSession(id: "keynote", SessionUpdate(state: .ended), at: 2_000_000_000, audit: [])
        let ended = try harness.get("/console/sessions/keynote/report").text
        #expect(ended.contains("1 devices, 2 samples, state ended") && !ended.contains("The session is live"))
    }

    /// One keeping for the page and the staff API's report (JSON and CSV, the page's "Download CSV"): the page
    /// made the report, the staff API's answers and the CSV link read it; nothing is made again.
    @Test func thePageAndTheStaffAPIShareOneKeptReport() throws {
        let harness = try PagesHarness()
        _ = try harness.storage.updateSession(id: "keynote", SessionUpdate(state: .live), at: 1_000_000_000, audit: [])
        let phone = try harness.enroll(.session("keynote"), name: "Phone")
        #expect(try harness.diag(phone, session: "keynote", build: "2.0.0", rtt: 40) == 204)
        let reports = harness.server.sync.staff.reports
        let before = reports.made
        #expect(try harness.get("/console/sessions/keynote/report").text.contains("1 devices, 1 samples, state live"))
        #expect(reports.made == before + 1)
        let auth = [("Authorization", "Bearer \(try harness.server.administration.createStaffToken(role: .moderator).text)")]
        #expect(try harness.diag(phone, session: "keynote", build: "2.0.1", rtt: 50) == 204)
        let json = try harness.client().request("GET", "/api/staff/sessions/keynote/report", auth)
        let samples = try JSONValue.parse(json.body)["samples"]
        #expect(json.status == 200 && samples == 1, "the staff API made its own report: \(json.text)")
        #expect(try harness.get("/console/sessions/keynote/report/csv").text.split(separator: "\r\n").count == 2)
        #expect(try harness.client().request("GET", "/api/staff/sessions/keynote/report?format=csv", auth).status == 200)
        #expect(reports.made == before + 1)
    }
}
