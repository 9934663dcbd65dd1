import Foundation
import PulseCore
import PulseCrypto
import PulseServerStorage
import Testing

/// `/console/companion`: a code or link is shown once (text, link and QR code), then only its id; revoking
/// needs the CSRF token.
@Suite struct CompanionDevicesPageTests {
    static func secret(after label: String, in html: String) -> String? {
        guard let range = html.range(of: label + #"<code class="secret">"#) else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "<" })
    }

    @Test func aDeviceCodeIsShownOnceAsTextLinkAndQRCodeThenOnlyItsId() throws {
        let harness = try PagesHarness()
        let form = try harness.get("/console/companion")
        #expect(form.status == 200)
        for name in ["New device code", "New attendee link", "Codes and links"] { #expect(form.text.contains(name), "\(name)") }

        let minted = try harness.post("/console/companion", [("do", "code"), ("scope", "session:keynote"), ("expires", "3600")])
        #expect(minted.status == 200, "\(minted.text)")
        let code = try #require(Self.secret(after: "Code: ", in: minted.text))
        let linkText = try #require(Self.secret(after: "Link: ", in: minted.text))
        let link = try EnrollmentLink(parsing: linkText)
        #expect(link.credential == .deviceCode(code))
        #expect(link.server == harness.origin)
        #expect(minted.text.contains(#"<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="QR code of the enrollment link"#))
        #expect(minted.text.contains("Shown once."))
        // A phone's camera reads the page's QR code as the link.
        #expect(try QRDecoding.decode(html: minted.text) == linkText)

        let record = try #require(try harness.storage.credentials().first { $0.kind == .deviceCode })
        let later = try harness.get("/console/companion")
        #expect(later.text.contains(record.id))
        #expect(!later.text.contains(code) && !later.text.contains(CredentialSecret.normalizedDeviceCode(code) ?? "-"))
        #expect(!later.text.contains("<svg"))
        // The code enrolls a phone: the list counts it.
        let body = try harness.enrollWith(code)
        #expect(body == 200)
        #expect(try harness.get("/console/companion").text.contains(#"<td class="num">1</td><td class="num">1</td>"#))
    }

    @Test func anAttendeeLinkHasItsCapAndTokenOnceAndBadFormsAreRefused() throws {
        let harness = try PagesHarness()
        let minted = try harness.post("/console/companion", [("do", "link"), ("series", "devconf-2026"), ("cap", "2"), ("expires", "86400")])
        #expect(minted.status == 200, "\(minted.text)")
        let link = try EnrollmentLink(parsing: try #require(Self.secret(after: "Link: ", in: minted.text)))
        guard case let .registrationToken(token) = link.credential else { Issue.record("not a token link"); return }
        // Scanned from the page, the link enrolls attendees' phones, up to the cap of 2.
        let scanned = try EnrollmentLink(parsing: try QRDecoding.decode(html: minted.text))
        #expect(scanned == link)
        #expect(try harness.enrollWith(scanned.credential.secret) == 200)
        #expect(try harness.enrollWith(scanned.credential.secret) == 200)
        #expect(try harness.enrollWith(scanned.credential.secret) == 404)
        let record = try #require(try harness.storage.credentials().first { $0.kind == .registrationToken })
        #expect(record.maxDevices == 2)
        #expect(!(try harness.get("/console/companion").text.contains(token)))

        for fields in [
            [("do", "link"), ("series", "no-such-series"), ("expires", "86400")],
            [("do", "link"), ("series", "devconf-2026"), ("cap", "-1"), ("expires", "86400")],
            [("do", "code"), ("scope", "session:nope"), ("expires", "3600")],
            [("do", "code"), ("scope", "session:keynote"), ("expires", "99")],
        ] {
            let refused = try harness.post("/console/companion", fields)
            #expect(refused.status == 400, "\(fields): \(refused.status)")
            #expect(refused.text.contains(#"role="alert""#))
        }
        #expect(try harness.storage.credentials().filter { $0.kind != .staffToken }.count == 1)
    }

    @Test func theLinkLandsOnAPublicPageThatNeverSeesTheCode() throws {
        let harness = try PagesHarness()
        let landing = try harness.client().request("GET", "/console/enroll")
        #expect(landing.status == 200)
        #expect(landing.text.contains("Join with the Pulse app"))
        #expect(landing.header("content-security-policy")?.contains("default-src 'none'") == true)
        #expect(landing.header("set-cookie") == nil)
    }

    @Test func revokingNeedsTheCSRFTokenAndThenRevokes() throws {
        let harness = try PagesHarness()
        _ = try harness.server.deviceCode(.session("keynote"))
        let record = try #require(try harness.storage.credentials().first { $0.kind == .deviceCode })
        let page = try harness.get("/console/companion")
        #expect(page.text.contains(#"data-confirm="Revoke \#(record.id)?"#))

        let forged = try harness.post("/console/companion", [("do", "revoke"), ("id", record.id)], csrf: false)
        #expect(forged.status == 403)
        #expect(try harness.storage.credentials().first { $0.id == record.id }?.revokedAt == nil)

        let revoked = try harness.post("/console/companion", [("do", "revoke"), ("id", record.id)])
        #expect(revoked.status == 303)
        #expect(try harness.storage.credentials().first { $0.id == record.id }?.revokedAt != nil)
        let audit = try harness.storage.auditEntries(after: 0, since: nil, limit: 100)
        #expect(audit.contains { $0.entry.action == .tokenRevoke && $0.entry.actor.kind == .staff })
    }
}

extension CompanionDevicesPageTests {
    /// A leaked attendee link: "Revoke with its devices" (its own button, named for the link) cuts the link and
    /// every phone it enrolled through the staff API's `withDevices`, audited, once confirmed: with the script by
    /// `data-confirm`, without it on a page of its own. Without the CSRF token, or as a moderator, nothing changes.
    @Test func revokeWithItsDevicesCutsEveryPhoneOfTheLinkOnceConfirmed() throws {
        let harness = try PagesHarness()
        let link = try harness.server.registrationToken(series: "devconf-2026")
        for _ in 0..<3 { #expect(try harness.enrollWith(link) == 200) }
        let stage = try harness.enroll(.session("keynote"), name: "Stage left")  // a device code's phone
        let record = try #require(try harness.storage.credentials().first { $0.kind == .registrationToken })
        let code = try #require(try harness.storage.credentials().first { $0.kind == .deviceCode })
        func linkDevices() throws -> [DeviceRecord] { try harness.storage.devices().filter { $0.credentialId == record.id } }
        #expect(try linkDevices().count == 3)

        let page = try harness.get("/console/companion")
        #expect(page.text.contains(#"aria-label="Revoke \#(record.id) with its devices">Revoke with its devices</button>"#), "\(page.text)")
        #expect(page.text.contains(#"data-confirm="Revoke attendee link \#(record.id) and every device it enrolled (3)? "#))
        #expect(page.text.contains(#"aria-label="Revoke \#(record.id)">Revoke</button>"#))
        #expect(!page.text.contains("Revoke \(code.id) with its devices"), "a device code has no such button")

        // Without the script nothing asked yet: the post answers with the question, and nothing changes.
        let asked = try harness.post("/console/companion", [("do", "revoke-devices"), ("id", record.id), ("confirmed", "")])
        #expect(asked.status == 200 && asked.text.contains("Revoke attendee link \(record.id) with its devices"), "\(asked.text)")
        #expect(asked.text.contains(#"name="confirmed" value="yes""#) && asked.text.contains(#"aria-label="Revoke \#(record.id) with its devices""#))
        #expect(asked.text.contains("every device it enrolled: 3 so far") && asked.text.contains(#"href="/console/companion">Cancel"#))
        // Forged (no CSRF token), or a moderator: refused, nothing changes.
        let forged = try harness.post("/console/companion", [("do", "revoke-devices"), ("id", record.id), ("confirmed", "yes")], csrf: false)
        #expect(forged.status == 403)
        let moderator = try PagesHarness.signedIn(harness, token: try harness.server.administration.createStaffToken(role: .moderator).text)
        #expect(try moderator.post("/console/companion", [("do", "revoke-devices"), ("id", record.id), ("confirmed", "yes")]).status == 403)
        #expect(try harness.storage.credentials().first { $0.id == record.id }?.revokedAt == nil)
        #expect(try linkDevices().allSatisfy { !$0.isRevoked })
        // A device code is no attendee link.
        #expect(try harness.post("/console/companion", [("do", "revoke-devices"), ("id", code.id), ("confirmed", "yes")]).status == 404)

        // Confirmed: the link and its three phones, in one call; the stage phone (a device code's) stays.
        let revoked = try harness.post("/console/companion", [("do", "revoke-devices"), ("id", record.id), ("confirmed", "yes")])
        #expect(revoked.status == 303, "\(revoked.text)")
        #expect(try harness.storage.credentials().first { $0.id == record.id }?.revokedAt != nil)
        #expect(try linkDevices().count == 3 && linkDevices().allSatisfy(\.isRevoked))
        #expect(try harness.storage.device(id: stage.id)?.isRevoked == false)
        #expect(try harness.get("/console/companion").text.contains("Revoked \(record.id) and the 3 devices it enrolled."))
        let audit = try harness.storage.auditEntries(after: 0, since: nil, limit: 100)
        #expect(audit.contains { $0.entry.action == .tokenRevoke && $0.entry.actor.kind == .staff && $0.entry.detail == "with its devices" }, "\(audit)")
        // A revoked link with its phones gone: the staff API's 404, as the page's error line.
        let again = try harness.post("/console/companion", [("do", "revoke-devices"), ("id", record.id), ("confirmed", "yes")])
        #expect(again.status == 404 && again.text.contains(#"role="alert""#))
    }
}

extension PagesHarness {
    /// `POST /api/sync/enroll` with `token`: the status.
    func enrollWith(_ token: String) throws -> Int {
        let key = try PulseCrypto.P256.PrivateKey()
        let body = JSONValue.object([
            "token": .string(token), "publicKey": .string(Data(key.publicKey.derRepresentation).base64EncodedString()),
            "platform": "ios", "name": "Phone",
        ]).canonicalBytes
        return try client().request("POST", "/api/sync/enroll", body: body).status
    }
}
