import Foundation
import PulseServerStorage
import Testing

/// The audit page: the staff actions of the console as a paged table, admins only.
@Suite struct AuditPageTests {
    @Test func consoleActionsAppearAndPagesFollowAndModeratorsAreRefused() throws {
        let harness = try PagesHarness()
        for _ in 0..<3 {
            #expect(try harness.post("/console/companion", [("do", "code"), ("scope", "session:keynote"), ("expires", "3600")]).status == 200)
        }
        let page = try harness.get("/console/audit")
        #expect(page.status == 200, "\(page.text)")
        #expect(page.text.contains("<code>device-code.create</code>"))
        #expect(page.text.contains("(admin)"))
        let rows = try harness.storage.auditEntries(after: 0, since: nil, limit: 1000)
        #expect(rows.count >= 3)
        // The next page starts after the given id.
        let last = try #require(rows.last)
        let after = try harness.get("/console/audit?after=\(last.id - 1)")
        #expect(after.text.contains(#"<td class="num">\#(last.id)</td>"#))
        #expect(!after.text.contains(#"<td class="num">\#(last.id - 1)</td>"#))
        #expect(try harness.get("/console/audit?after=" + String(repeating: "9", count: 40)).status == 200)

        // A moderator may not open it (nor the companion devices page).
        let moderator = try harness.server.administration.createStaffToken(role: .moderator).text
        let other = try PagesHarness.signedIn(harness, token: moderator)
        #expect(try other.get("/console/audit").status == 403)
        #expect(try other.get("/console/companion").status == 403)
        #expect(try other.get("/console/sessions/keynote/report").status == 200)
        #expect(try other.get("/console/sessions/keynote/live").status == 200)
    }
}
