import Foundation
import PulseCore
import PulseCrypto
import PulseSystem
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseStaffAPI
@testable import PulseSyncAPI

/// `POST /api/sessions/{id}/diag`, the moderator's live view and the report, and the staff API.
@Suite struct DiagAndStaffTests {
    static func sample(_ fields: [String: JSONValue]) -> [UInt8] { JSONValue.object(fields).canonicalBytes }

    @Test func samplesAreValidatedStoredAndShown() throws {
        let harness = try SyncHarness(configure: { $0.deviceLimit = RateLimit(rate: 1000, burst: 1000) })
        try harness.seed(["talk"], state: .live)
        let phone = try harness.enroll(try harness.code(.session("talk")), name: "Ada's iPhone")
        let tablet = try harness.enroll(try harness.code(.session("talk")), name: "=cmd|' /C calc'!A0")
        let client = try harness.client()
        let path = "/api/sessions/talk/diag"
        let good: [String: JSONValue] = ["build": "2.4.1", "platform": "ios", "online": true, "effectiveType": "4g", "rttMs": 38, "downlinkKbps": 9500, "extra": "ignored"]
        let posted = try client.signed("POST", path, by: phone, at: harness.clock.seconds, body: Self.sample(good))
        #expect(posted.status == 204 && posted.body.isEmpty)
        harness.clock.advance(by: 5)
        #expect(try client.signed("POST", path, by: phone, at: harness.clock.seconds, body: Self.sample(good.merging(["rttMs": 60, "build": "2.4.2"]) { $1 })).status == 204)
        #expect(try client.signed("POST", path, by: tablet, at: harness.clock.seconds, body: Self.sample(["build": "2.4.2", "platform": "android", "online": false])).status == 204)

        // Every bad field is named.
        let bad: [(String, JSONValue?)] = [
            ("build", nil), ("build", 5), ("build", ""), ("build", .string(String(repeating: "b", count: 65))), ("platform", "Android 14!"),
            ("online", nil), ("online", 1), ("online", "yes"), ("effectiveType", "6g"), ("rttMs", -1), ("rttMs", .double(1.5)), ("rttMs", 600_001),
            ("downlinkKbps", "fast"), ("downlinkKbps", -3), ("downlinkKbps", 10_000_001),
        ]
        for (field, value) in bad {
            var body = good
            body[field] = value
            let response = try client.signed("POST", path, by: phone, at: harness.clock.seconds, body: Self.sample(body))
            #expect(response.status == 400 && response.json == ["error": "badRequest", "field": .string(field)], "\(field) = \(String(describing: value)): \(response.text)")
        }
        for body in ["[1]", "{", "null"] {
            let response = try client.signed("POST", path, by: phone, at: harness.clock.seconds, body: Array(body.utf8))
            #expect(response.json == ["error": "badRequest", "field": "body"], "\(body)")
        }
        // More than 16 KB: 413 before anything else.
        let huge = try client.signed("POST", path, by: phone, at: harness.clock.seconds, body: [UInt8](repeating: 0x20, count: 16 * 1024 + 1))
        #expect(huge.status == 413)
        #expect(try harness.storage.samples(sessionId: "talk").count == 3)

        // The moderator's live view: both devices, the newest sample of each, with its build.
        let staff = try harness.staffToken()
        let live = try harness.client().request("GET", "/api/staff/sessions/talk/live", [("Authorization", "Bearer \(staff)")])
        #expect(live.status == 200)
        let devices = try #require(live.json?["devices"]?.arrayValue)
        #expect(devices.map { $0["deviceId"]?.stringValue } == [phone.id, tablet.id].sorted().map(Optional.some))
        let ada = try #require(devices.first { $0["deviceId"]?.stringValue == phone.id })
        #expect(ada["build"] == "2.4.2" && ada["name"] == "Ada's iPhone" && ada["connection"]?["rttMs"] == 60 && ada["connection"]?["extra"] == nil)
        // A minute later nobody is live.
        harness.clock.advance(by: 61)
        let later = try harness.client().request("GET", "/api/staff/sessions/talk/live", [("Authorization", "Bearer \(staff)")])
        #expect(later.json?["devices"] == [])

        // The report, JSON and CSV.
        let report = try harness.client().request("GET", "/api/staff/sessions/talk/report", [("Authorization", "Bearer \(staff)")])
        let rows = try #require(report.json?["rows"]?.arrayValue)
        #expect(report.json?["samples"] == 3 && rows.count == 2)
        let row = try #require(rows.first { $0["deviceId"]?.stringValue == phone.id })
        #expect(row["builds"] == ["2.4.1", "2.4.2"] && row["samples"] == 2 && row["rttMsMedian"] == 49 && row["offlineSamples"] == 0)
        for (target, accept) in [("/api/staff/sessions/talk/report?format=csv", "*/*"), ("/api/staff/sessions/talk/report", "text/csv")] {
            let csv = try harness.client().request("GET", target, [("Authorization", "Bearer \(staff)"), ("Accept", accept)])
            #expect(csv.header("content-type") == "text/csv; charset=utf-8")
            let lines = csv.text.split(separator: "\r\n").map(String.init)
            #expect(lines.first == StaffReport.csvHeader && lines.count == 3)
            #expect(lines.contains { $0.hasPrefix("\(phone.id),\"Ada's iPhone\",ios,2.4.2,2,0,") })
            // A device name that a spreadsheet would run as a formula is defused (and quoted: it holds separators).
            #expect(lines.contains { $0.hasPrefix("\(tablet.id),\"'=cmd|' /C calc'!A0\",android,2.4.2,1,1,") })
        }
    }

    @Test func theStaffAPIDoesWhatAdminDoes() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk", "other"], series: "conf")
        let staff = try harness.staffToken()
        let auth = [("Authorization", "Bearer \(staff)")]
        func call(_ method: String, _ path: String, _ body: JSONValue? = nil, headers: [(String, String)]? = nil) throws -> RawHTTPResponse {
            try harness.client().request(method, "/api/staff/" + path, headers ?? auth, body: body?.canonicalBytes ?? [])
        }
        // No token, a wrong one, a device code, a revoked staff token: 401, the same answer.
        let revoked = try harness.staffToken()
        try harness.administration.revokeToken(revoked)
        var refusals: [[UInt8]] = []
        for headers in [[], [("Authorization", "Bearer \(CredentialSecret.isTokenShaped(revoked) ? revoked : "")")],
                        [("Authorization", "Bearer " + String(repeating: "x", count: 43))], [("Authorization", "Basic \(staff)")],
                        [("Authorization", "Bearer \(try harness.code(.session("talk")))")]] {
            let response = try call("GET", "sessions", headers: headers)
            #expect(response.status == 401 && response.header("www-authenticate") == #"Bearer realm="pulse-server""#)
            refusals.append(response.rawWithoutDate)
        }
        #expect(Set(refusals).count == 1)
        // Case-insensitive scheme.
        #expect(try call("GET", "sessions", headers: [("Authorization", "bearer \(staff)")]).status == 200)

        // Minting: a device code that enrolls, a registration token with its cap, a staff token that works.
        let code = try call("POST", "device-codes", ["session": "talk", "expires": "2h"])
        #expect(code.status == 201 && code.json?["kind"] == "device-code" && code.json?["scope"] == ["kind": "session", "id": "talk"])
        #expect(code.json?["expiresAt"]?.stringValue == PulseServerStorage.TimeText.iso(harness.clock.seconds + 7200))
        let device = try harness.enroll(try #require(code.json?["secret"]?.stringValue))
        let token = try call("POST", "registration-tokens", ["series": "conf", "maxDevices": 1])
        #expect(token.status == 201 && token.json?["maxDevices"] == 1)
        _ = try harness.enroll(try #require(token.json?["secret"]?.stringValue))
        let newStaff = try #require(try call("POST", "staff-tokens", [:]).json?["secret"]?.stringValue)
        #expect(try call("GET", "devices", headers: [("Authorization", "Bearer \(newStaff)")]).json?.arrayValue?.count == 2)
        // Bad requests name the problem.
        #expect(try call("POST", "device-codes", ["session": "talk", "series": "conf"]).status == 400)
        #expect(try call("POST", "device-codes", ["session": "nope"]).status == 404)
        #expect(try call("POST", "registration-tokens", ["series": "conf", "maxDevices": 0]).status == 400)
        #expect(try call("POST", "device-codes", ["session": "talk", "expires": "forever"]).json?["error"] == "badRequest")

        // Listing and revoking.
        let tokens = try #require(try call("GET", "tokens").json?.arrayValue)
        let listing = String(decoding: try call("GET", "tokens").body, as: UTF8.self)
        #expect(tokens.count == 6 && !listing.contains(staff))
        let codeId = try #require(code.json?["id"]?.stringValue)
        #expect(try call("POST", "tokens/revoke", ["token": .string(codeId)]).status == 200)
        #expect(try call("POST", "tokens/revoke", ["token": .string(codeId)]).status == 404)
        let revokedDevice = try call("POST", "devices/\(device.id)/revoke")
        #expect(revokedDevice.status == 200 && revokedDevice.json?["status"] == "revoked")
        #expect(try call("POST", "devices/\(device.id)/revoke").status == 404)
        #expect(try harness.client().signed("GET", "/api/sync/manifest?session=talk", by: device, at: harness.clock.seconds).status == 404)

        // Sessions: set, advance (refused in draft), read.
        #expect(try call("POST", "sessions/talk/advance", ["maxShown": 3]).status == 409)
        let set = try call("PATCH", "sessions/talk", ["state": "live", "allowDownload": true, "venueNetworks": ["10.20.0.0/16"]])
        #expect(set.status == 200 && set.json?["state"] == "live" && set.json?["venueNetworks"] == ["10.20.0.0/16"] && set.json?["allowDownload"] == true)
        let advanced = try call("POST", "sessions/talk/advance", ["maxShown": 3])
        #expect(advanced.status == 200 && advanced.json?["moved"] == true && advanced.json?["session"]?["maxShown"] == 3)
        #expect(try call("POST", "sessions/talk/advance", ["maxShown": 1]).json?["moved"] == false)
        #expect(try call("POST", "sessions/talk/advance", ["maxShown": 99]).json?["session"]?["maxShown"] == 9)
        #expect(try call("POST", "sessions/talk", ["maxShown": 2, "venueNetworks": []]).json?["maxShown"] == 9)
        #expect(try call("GET", "sessions/talk").json?["venueNetworks"] == [])
        #expect(try call("GET", "sessions").json?.arrayValue?.count == 2)
        #expect(try call("POST", "sessions/talk", ["state": "paused"]).status == 400)
        #expect(try call("POST", "sessions/talk", ["venueNetworks": ["10.1.2.3/8"]]).status == 400)
        #expect(try call("POST", "sessions/talk", [:]).status == 400)
        #expect(try call("POST", "sessions/nope", ["state": "live"]).status == 404)
        #expect(try call("POST", "sessions/talk/advance", ["maxShown": "three"]).status == 400)
        #expect(try call("GET", "sessions/nope/live").status == 404)
        #expect(try call("GET", "nothing").status == 404)
        // A body that is not JSON.
        #expect(try harness.client().request("POST", "/api/staff/sessions/talk/advance", auth, body: Array("{".utf8)).status == 400)
    }
}
