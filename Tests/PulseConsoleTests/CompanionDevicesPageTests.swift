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
