import Foundation
import PulseServerStorage
import Testing

/// `/console/devices`: hostile device strings come out as text; search is bounded; revoking needs the
/// confirmation page's form and its CSRF token.
@Suite struct DevicesPageTests {
    @Test func hostileNamesAndBuildsAreTextAndSearchFinds() throws {
        let harness = try PagesHarness()
        let hostile = try harness.enroll(.session("keynote"), name: PagesHarness.hostileName)
        _ = try harness.enroll(.session("keynote"), name: "Ada's phone")
        #expect(try harness.diag(hostile, session: "keynote", build: PagesHarness.hostileBuild, rtt: 40) == 204)

        let page = try harness.get("/console/devices")
        #expect(page.status == 200)
        #expect(!page.text.contains(PagesHarness.hostileName) && !page.text.contains("<script>alert"))
        #expect(page.text.contains("<bdi>&lt;img src=x onerror=alert(1)&gt;</bdi>"))
        #expect(page.text.contains("<bdi>&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;</bdi>"))
        #expect(page.text.contains("2 devices"))

        // Search matches ids too: the term has letters no hex id holds ("ada" once matched "…b1ada…").
        let found = try harness.get("/console/devices?q=PHONE")
        #expect(found.text.contains("1 device<") && found.text.contains("Ada"))
        #expect(!found.text.contains("onerror"))
        let long = try harness.get("/console/devices?q=" + String(repeating: "a", count: 3000))
        #expect(long.status == 200 && long.text.contains("No device matches"))
    }

    @Test func revokeGoesThroughAConfirmationWithCSRF() throws {
        let harness = try PagesHarness()
        let phone = try harness.enroll(.session("keynote"), name: PagesHarness.hostileName)
        let list = try harness.get("/console/devices")
        #expect(list.text.contains(#"href="/console/devices/\#(phone.id)/revoke""#))
        let confirm = try harness.get("/console/devices/\(phone.id)/revoke")
        #expect(confirm.status == 200 && confirm.text.contains("Revoke device") && confirm.text.contains("&lt;img"))
        #expect(try harness.get("/console/devices/no-such/revoke").status == 404)

        #expect(try harness.post("/console/devices/\(phone.id)/revoke", [], csrf: false).status == 403)
        #expect(try harness.storage.device(id: phone.id)?.isRevoked == false)
        #expect(try harness.post("/console/devices/\(phone.id)/revoke", []).status == 303)
        #expect(try harness.storage.device(id: phone.id)?.isRevoked == true)
    }
}
