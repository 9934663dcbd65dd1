import Foundation
import PulseServerStorage
import Testing

/// Each role against the pages branch's pages: what opens, what shows a button, what is refused.
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

        let scoped = try PagesHarness.signedIn(
            harness, token: try harness.server.administration.createStaffToken(role: .moderator, session: "keynote").text)
        #expect(try scoped.get("/console/sessions/keynote/report").status == 200)
        #expect(try scoped.get("/console/sessions/\(other)/report").status == 404)
        #expect(try scoped.get("/console/sessions/\(other)/live").status == 404)
        #expect(try scoped.get("/console/sessions/\(other)/report/csv").status == 404)

        let presenter = try PagesHarness.signedIn(
            harness, token: try harness.server.administration.createStaffToken(role: .presenter, session: "keynote").text)
        for path in ["/console/devices", "/console/live", "/console/sessions/keynote/live", "/console/sessions/keynote/report", "/console/companion"] {
            #expect(try presenter.get(path).status == 403, "\(path)")
        }
    }
}
