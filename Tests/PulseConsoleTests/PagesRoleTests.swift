import Foundation
import PulseServerStorage
import Testing

/// Each role against the console's pages: what opens, what shows a button, what is refused, and what a token
/// scoped to one session sees of the others (nothing).
@Suite struct PagesRoleTests {
    @Test func moderatorsReadButChangeNothingAndPresentersSeeNoDevices() throws {
        let harness = try PagesHarness()
        let phone = try harness.enroll(.session("keynote"), name: "Ada's phone")
        #expect(try harness.diag(phone, session: "keynote", build: "1.0", rtt: 30) == 204)
        let other = try #require(try harness.storage.sessions().map(\.id).first { $0 != "keynote" })

        let moderator = try PagesHarness.signedIn(harness, token: try harness.server.administration.createStaffToken(role: .moderator).text)
        let devices = try moderator.get("/console/devices")
        #expect(devices.status == 200 && devices.text.contains("Ada") && !devices.text.contains("/revoke"))
        #expect(try moderator.get("/console/devices/\(phone.id)/revoke").status == 403)
        #expect(try moderator.post("/console/devices/\(phone.id)/revoke", []).status == 403)
        #expect(try moderator.get("/console/companion").status == 403)
        #expect(try moderator.get("/console/audit").status == 403)
        #expect(try moderator.get("/console/sessions/keynote/live").status == 200)
        #expect(try moderator.get("/console/sessions/\(other)/report").status == 200)
        #expect(try harness.storage.device(id: phone.id)?.isRevoked == false)

        let presenter = try PagesHarness.signedIn(
            harness, token: try harness.server.administration.createStaffToken(role: .presenter, session: "keynote").text)
        for path in ["/console/devices", "/console/live", "/console/sessions/keynote/live", "/console/sessions/keynote/report", "/console/companion"] {
            #expect(try presenter.get(path).status == 403, "\(path)")
        }
    }

    /// A moderator (or presenter) token of the keynote reads nothing of the workshop: not its devices (the
    /// devices page filters by the staff API's own rule), not its live view, report, CSV, clicker or their
    /// streams, not its row in any list.
    @Test func aScopedTokenSeesNothingOfAnotherSession() throws {
        let harness = try PagesHarness()
        let other = try #require(try harness.storage.sessions().map(\.id).first { $0 != "keynote" })
        let series = try #require(try harness.storage.session(id: "keynote")?.seriesId)
        let ada = try harness.enroll(.session("keynote"), name: "Ada's phone")
        _ = try harness.enroll(.series(series), name: "Grace's tablet")
        let bob = try harness.enroll(.session(other), name: "Bob's phone")
        #expect(try harness.diag(ada, session: "keynote", build: "1.0", rtt: 30) == 204)
        #expect(try harness.diag(bob, session: other, build: "9.9-bob", rtt: 31) == 204)

        // The admin (unscoped) sees all three.
        let all = try harness.get("/console/devices")
        #expect(all.status == 200 && all.text.contains("Ada") && all.text.contains("Grace") && all.text.contains("Bob"))

        let scoped = try PagesHarness.signedIn(
            harness, token: try harness.server.administration.createStaffToken(role: .moderator, session: "keynote").text)
        let devices = try scoped.get("/console/devices")
        #expect(devices.status == 200 && devices.text.contains("Ada") && devices.text.contains("Grace"))
        #expect(!devices.text.contains("Bob") && !devices.text.contains(bob.id), "a keynote moderator lists the workshop's device")
        #expect(devices.text.contains("2 devices"))
        let searched = try scoped.get("/console/devices?q=bob")
        #expect(searched.status == 200 && !searched.text.contains("Bob") && searched.text.contains("No device matches"))
        let byId = try scoped.get("/console/devices?q=\(bob.id.prefix(10))")
        #expect(!byId.text.contains("Bob"))

        // The other session's pages and streams: not found, or not allowed; nothing of it in the lists.
        for path in [
            "/console/sessions/\(other)", "/console/sessions/\(other)/events", "/console/sessions/\(other)/live",
            "/console/sessions/\(other)/live/events", "/console/sessions/\(other)/report", "/console/sessions/\(other)/report/csv",
        ] {
            let answer = try scoped.get(path)
            #expect(answer.status == 404 || answer.status == 403, "\(path): \(answer.status)")
            #expect(!answer.text.contains("Bob") && !answer.text.contains("9.9-bob"), "\(path)")
        }
        for path in ["/console/sessions", "/console/live"] {
            let answer = try scoped.get(path)
            #expect(answer.status == 200 && !answer.text.contains("/console/sessions/\(other)"), "\(path) links the other session")
        }
        let live = try scoped.get("/console/sessions/keynote/live")
        #expect(live.status == 200 && live.text.contains("Ada") && !live.text.contains("Bob"))
        let report = try scoped.get("/console/sessions/keynote/report")
        #expect(report.status == 200 && report.text.contains("Ada") && !report.text.contains("Bob") && !report.text.contains("9.9-bob"))
        let csv = try scoped.get("/console/sessions/keynote/report/csv")
        #expect(csv.status == 200 && csv.text.contains("Ada") && !csv.text.contains("Bob"))
        for path in ["/console/companion", "/console/audit", "/console/staff-tokens", "/console/devices/\(bob.id)/revoke"] {
            #expect(try scoped.get(path).status == 403, "\(path)")
        }

        // A presenter of the keynote: its clicker only.
        let presenter = try PagesHarness.signedIn(
            harness, token: try harness.server.administration.createStaffToken(role: .presenter, session: "keynote").text)
        #expect(try presenter.get("/console/sessions/keynote").status == 200)
        for path in ["/console/sessions/\(other)", "/console/sessions/\(other)/events"] {
            let answer = try presenter.get(path)
            #expect(answer.status == 404 && !answer.text.contains("Bob"), "\(path): \(answer.status)")
        }
        for path in [
            "/console/devices", "/console/devices/\(bob.id)/revoke", "/console/live", "/console/sessions/keynote/live/events",
            "/console/sessions/\(other)/live", "/console/sessions/\(other)/report/csv", "/console/audit", "/console/staff-tokens",
        ] {
            #expect(try presenter.get(path).status == 403, "\(path)")
        }
    }
}
