import Foundation
import PulseServerStorage
import PulseSyncAPI
import Testing

/// "K of D devices have this slide's key" counts no revoked device, whether the staff API or another
/// process (the admin command line: a change in storage only) revoked it.
@Suite struct KeyHoldersRevocationTests {
    @Test func aRevokedDeviceLeavesTheClickersCount() throws {
        let harness = try PagesHarness()
        let phones = [try harness.enroll(.session("keynote"), name: "One"), try harness.enroll(.session("keynote"), name: "Two")]
        for phone in phones {
            let target = "/api/sync/keys?session=keynote"
            let signature = try DeviceSignature.sign(method: "GET", target: target, body: [], deviceId: phone.id, key: phone.key, at: Int64(Date().timeIntervalSince1970))
            #expect(try harness.client().request("GET", target, [("X-Pulse-Device", signature.headerValue)]).status == 200)
        }
        #expect(try harness.get("/console/sessions/keynote").text.contains(" of 2 devices have this slide"))
        // As `pulse-server admin device revoke` does: storage only, no call into this server.
        #expect(try harness.storage.revokeDevice(id: phones[0].id, at: Int64(Date().timeIntervalSince1970), audit: []))
        var text = ""
        for _ in 0..<100 {
            text = try harness.get("/console/sessions/keynote").text
            if text.contains(" of 1 devices have this slide") { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(text.contains(" of 1 devices have this slide"))
    }
}
