import Foundation
import PulseCore
import PulseServerStorage
import Testing

/// `/console/staff-tokens`: an admin mints a presenter's token through the staff API (its checks and audit),
/// sees it once with the presenter link and its QR code, and the link signs the presenter in; the list shows
/// ids, roles and scopes, never a secret; "Revoke" ends the token; nobody else may do any of it.
@Suite struct StaffTokensPageTests {
    @Test func aPresenterTokenIsShownOnceWithItsLinkAndQRCodeAndTheLinkSignsIn() throws {
        let harness = try PagesHarness()
        let form = try harness.get("/console/staff-tokens")
        #expect(form.status == 200)
        for name in ["New staff token", "Role", "Session", "Expires after", "Staff tokens ("] { #expect(form.text.contains(name), "\(name)") }
        #expect(form.text.contains(#"<a href="/console/staff-tokens" aria-current="page">Staff tokens</a>"#))

        let minted = try harness.post("/console/staff-tokens", [("do", "mint"), ("role", "presenter"), ("session", "keynote"), ("expires", "43200")])
        #expect(minted.status == 200, "\(minted.text)")
        let token = try #require(CompanionDevicesPageTests.secret(after: "Token: ", in: minted.text))
        let link = try #require(CompanionDevicesPageTests.secret(after: "Presenter link: ", in: minted.text))
        #expect(link == harness.origin + "/console/present#" + token)
        #expect(minted.text.contains("Shown once."))
        #expect(try QRDecoding.decode(html: minted.text) == link)

        let record = try #require(try harness.storage.credentials().first { $0.kind == .staffToken && $0.staffRole == .presenter })
        #expect(record.staffSession == "keynote" && record.expiresAt != nil)
        let audit = try harness.storage.auditEntries(after: 0, since: nil, limit: 100)
        #expect(audit.contains { $0.entry.action == .staffTokenCreate && $0.entry.actor.kind == .staff && $0.entry.result == .ok })

        // The list: ids, role, scope; the secret never again.
        let later = try harness.get("/console/staff-tokens")
        #expect(later.text.contains(record.id) && later.text.contains("Presenter") && later.text.contains("session "))
        #expect(!later.text.contains(token) && !later.text.contains("<svg"))
        #expect(later.text.contains("(yours)"))

        // The presenter link's token signs in (what the page's script posts) and lands on the keynote.
        let presenter = try harness.client().request(
            "POST", "/console/sign-in", [("Content-Type", "application/x-www-form-urlencoded"), ("Origin", harness.origin)],
            body: Array("token=\(token)".utf8))
        #expect(presenter.status == 303 && presenter.header("location") == "/console/sessions/keynote")

        // Revoked: the token resolves no more.
        let revoked = try harness.post("/console/staff-tokens", [("do", "revoke"), ("id", record.id)])
        #expect(revoked.status == 303)
        #expect(try harness.storage.credentials().first { $0.id == record.id }?.revokedAt != nil)
        let again = try harness.client().request(
            "POST", "/console/sign-in", [("Content-Type", "application/x-www-form-urlencoded"), ("Origin", harness.origin)],
            body: Array("token=\(token)".utf8))
        #expect(again.status != 303)
    }

    @Test func theStaffAPIDecidesRolesAndScopesAndAModeratorsTokenIsNotAPresentersLink() throws {
        let harness = try PagesHarness()
        let moderator = try harness.post("/console/staff-tokens", [("do", "mint"), ("role", "moderator"), ("session", ""), ("expires", "86400")])
        #expect(moderator.status == 200 && moderator.text.contains("Token: ") && !moderator.text.contains("Presenter link") && !moderator.text.contains("<svg"))
        let scoped = try harness.post("/console/staff-tokens", [("do", "mint"), ("role", "moderator"), ("session", "keynote"), ("expires", "86400")])
        #expect(scoped.status == 200)
        for (fields, status) in [
            ([("do", "mint"), ("role", "presenter"), ("expires", "86400")], 400),  // a presenter needs a session (the staff API says so)
            ([("do", "mint"), ("role", "admin"), ("session", "keynote"), ("expires", "86400")], 400),
            ([("do", "mint"), ("role", "owner"), ("expires", "86400")], 400),
            ([("do", "mint"), ("role", "presenter"), ("session", "nope"), ("expires", "86400")], 400),
            ([("do", "mint"), ("role", "presenter"), ("session", "keynote"), ("expires", "5")], 400),
            ([("do", "revoke"), ("id", "000000000000")], 404),
        ] {
            let refused = try harness.post("/console/staff-tokens", fields)
            #expect(refused.status == status, "\(fields): \(refused.status)")
            #expect(refused.text.contains(#"role="alert""#))
        }
        let presenterRefusal = try harness.post("/console/staff-tokens", [("do", "mint"), ("role", "presenter"), ("expires", "86400")])
        #expect(presenterRefusal.text.contains("a presenter token needs a session"))
        let staff = try harness.storage.credentials().filter { $0.kind == .staffToken }
        #expect(staff.count == 3 && staff.filter { $0.staffRole == .moderator }.map(\.staffSession).sorted { ($0 ?? "") < ($1 ?? "") } == [nil, "keynote"])
    }

    @Test func onlyAnAdminMayOpenMintOrRevoke() throws {
        let harness = try PagesHarness()
        let own = try #require(try harness.storage.credentials().first { $0.kind == .staffToken })
        for (role, session) in [(StaffRole.moderator, String?.none), (.moderator, "keynote"), (.presenter, "keynote")] {
            let other = try PagesHarness.signedIn(harness, token: try harness.server.administration.createStaffToken(role: role, session: session).text)
            #expect(try other.get("/console/staff-tokens").status == 403, "\(role)")
            #expect(!(try other.get("/console/sessions/keynote").text.contains("/console/staff-tokens")), "\(role)")
            let before = try harness.storage.credentials()
            #expect(try other.post("/console/staff-tokens", [("do", "mint"), ("role", "admin"), ("expires", "86400")]).status == 403)
            #expect(try other.post("/console/staff-tokens", [("do", "revoke"), ("id", own.id)]).status == 403)
            #expect(try harness.storage.credentials() == before, "\(role)")
        }
    }
}
