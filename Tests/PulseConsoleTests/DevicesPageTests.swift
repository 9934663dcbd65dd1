import Foundation
import PulseServerStorage
import Testing
@testable import PulseConsole

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

    /// A page of `pageSize` newest first, "Next" and "Previous" links that keep the search, and a bounded offset.
    @Test func devicesComeInPagesThatKeepTheSearch() throws {
        let harness = try PagesHarness()
        let token = try CredentialSecret.newToken()
        let hash = try #require(CredentialSecret.hash(token))
        try harness.storage.addCredential(NewCredential(hash: hash, kind: .registrationToken, scope: .series("devconf-2026"), createdAt: 1))
        let count = DevicesPage.pageSize + 5
        for n in 0..<count {
            let id = String(format: "%032x", n + 1)
            let device = NewDevice(id: id, publicKey: Array(id.utf8), platform: "ios", name: n % 2 == 0 ? "Even phone \(n)" : "Odd phone \(n)")
            _ = try #require(try harness.storage.enroll(credentialHash: hash, device: device, at: 1000 + Int64(n)))
        }
        let first = try harness.get("/console/devices").text
        #expect(first.contains("Devices 1–\(DevicesPage.pageSize) of \(count).") && first.contains("Odd phone \(count - 2)"))
        #expect(first.contains(#"href="/console/devices?from=\#(DevicesPage.pageSize)">Next"#) && !first.contains(">Previous"))
        let second = try harness.get("/console/devices?from=\(DevicesPage.pageSize)").text
        #expect(second.contains("Devices \(DevicesPage.pageSize + 1)–\(count) of \(count).") && second.contains(">Even phone 0<"))
        #expect(second.contains(#"href="/console/devices?from=0">Previous"#) && !second.contains(">Next"))
        let search = try harness.get("/console/devices?q=even%20PHONE").text
        #expect(search.contains("Devices 1–\(DevicesPage.pageSize) of \((count + 1) / 2).") == false && search.contains("\((count + 1) / 2) devices"))
        let odd = try harness.get("/console/devices?q=odd+phone&from=2").text
        #expect(odd.contains("Devices 3–\(count / 2) of \(count / 2).") && odd.contains(#"href="/console/devices?q=odd%20phone&amp;from=0">Previous"#))
        #expect(try harness.get("/console/devices?from=99999999999999999999").status == 200)
        #expect(try harness.get("/console/devices?from=-5").text.contains("Devices 1–"))
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

    /// A row's action cell stays a table cell: it is `td.row-actions`, and `.actions` (a flex row of buttons)
    /// applies to paragraphs and divisions only, never to a cell (it once misaligned the Revoke cell).
    @Test func aRowsActionCellIsACell() throws {
        let harness = try PagesHarness()
        _ = try harness.enroll(.session("keynote"), name: "Ada's phone")
        _ = try harness.server.deviceCode(.session("keynote"))
        for path in ["/console/devices", "/console/companion", "/console/staff-tokens"] {
            let page = try harness.get(path).text
            #expect(page.contains(#"<td class="row-actions">"#) && !page.contains(#"<td class="actions""#), "\(path)")
        }
        let css = StyleSheet.text
        #expect(css.contains("p.actions, div.actions { display: flex;"))
        #expect(css.range(of: #"(^|[\s,}])\.actions\s*\{"#, options: .regularExpression) == nil, "a bare .actions rule reaches table cells")
    }
}
