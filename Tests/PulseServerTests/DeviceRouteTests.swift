import Foundation
import PulseCore
import PulseCrypto
import PulseSystem
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseSyncAPI

/// The checks every device-scoped request goes through, over a real socket.
@Suite struct DeviceRouteTests {
    /// Every "no" of the device-scoped routes is the same response, byte for byte off the wire (the `Date`
    /// header aside, which libmicrohttpd writes in one fixed format).
    @Test func everyNoIsTheSameBytes() throws {
        let harness = try SyncHarness(configure: { $0.deviceLimit = RateLimit(rate: 1000, burst: 1000) })
        try harness.seed(["talk", "other"], state: .live)
        let device = try harness.device(for: .session("talk"))
        let revoked = try harness.device(for: .session("talk"))
        try harness.administration.revokeDevice(id: revoked.id)
        let stranger = TestDevice(id: try DeviceID.generate(), key: try P256.PrivateKey())
        let now = harness.clock.seconds
        let keys = "/api/sync/keys?session=talk"
        let goodHeader = try device.header("GET", keys, at: now)
        let forged = try DeviceSignature.sign(method: "GET", target: keys, deviceId: device.id, key: try P256.PrivateKey(), at: now).headerValue
        let diagBody = Array(#"{"build":"1.0","platform":"ios","online":true}"#.utf8)
        let diagHeader = try device.header("POST", "/api/sessions/talk/diag", body: diagBody, at: now)
        #expect(try harness.client().request("POST", "/api/sessions/talk/diag", [("X-Pulse-Device", diagHeader)], body: diagBody).status == 204)

        let cases: [(String, () throws -> RawHTTPResponse)] = [
            ("no header", { try harness.client().request("GET", keys) }),
            ("malformed header", { try harness.client().request("GET", keys, [("X-Pulse-Device", "nonsense")]) }),
            ("two headers", { try harness.client().request("GET", keys, [("X-Pulse-Device", goodHeader), ("X-Pulse-Device", goodHeader)]) }),
            ("unknown device", { try harness.client().signed("GET", keys, by: stranger, at: now) }),
            ("revoked device", { try harness.client().signed("GET", keys, by: revoked, at: now) }),
            ("bad signature", { try harness.client().request("GET", keys, [("X-Pulse-Device", forged)]) }),
            ("signature of another request", { try harness.client().request("GET", "/api/sync/keys?session=other", [("X-Pulse-Device", goodHeader)]) }),
            ("not entitled", { try harness.client().signed("GET", "/api/sync/keys?session=other", by: device, at: now) }),
            ("no such session", { try harness.client().signed("GET", "/api/sync/keys?session=nope", by: device, at: now) }),
            ("no session parameter", { try harness.client().signed("GET", "/api/sync/keys", by: device, at: now) }),
            ("manifest of another session", { try harness.client().signed("GET", "/api/sync/manifest?session=other", by: device, at: now) }),
            ("series manifest of a session device", { try harness.client().signed("GET", "/api/sync/series/conf/manifest", by: device, at: now) }),
            ("events of another session", { try harness.client().signed("GET", "/api/sync/events?session=other", by: device, at: now) }),
            ("diag of another session", { try harness.client().signed("POST", "/api/sessions/other/diag", by: device, at: now, body: diagBody) }),
            ("replayed POST", { try harness.client().request("POST", "/api/sessions/talk/diag", [("X-Pulse-Device", diagHeader)], body: diagBody) }),
            ("wrong method", { try harness.client().signed("POST", keys, by: device, at: now, body: [0x7b, 0x7d]) }),
            ("wrong method on diag", { try harness.client().signed("GET", "/api/sessions/talk/diag", by: device, at: now) }),
            ("unknown route", { try harness.client().signed("GET", "/api/sync/secrets", by: device, at: now) }),
            ("bad enrollment token", { try harness.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: "ABCD-EFGH-JKMN", key: try P256.PrivateKey())) }),
        ]
        var reference: [UInt8]?
        for (name, send) in cases {
            let response = try send()
            #expect(response.status == 404, "\(name): \(response.status) \(response.text)")
            if let reference {
                #expect(response.rawWithoutDate == reference, "\(name): \(String(decoding: response.rawWithoutDate, as: UTF8.self))")
            } else {
                reference = response.rawWithoutDate
            }
        }
        // And the same request done right works.
        #expect(try harness.client().request("GET", keys, [("X-Pulse-Device", goodHeader)]).status == 200)
        print("the flat no:\n" + String(decoding: reference ?? [], as: UTF8.self))
    }

    /// Issue 17, item 1: the probe's one unauthenticated request that killed the process (a 20-digit `ts`
    /// overflowed the header parser's Int64) and its cousins, on every device-scoped route, for an unknown
    /// device and for an enrolled one: each is the flat 404, and the server goes on answering. Item 2: a
    /// zero-padded `ts` with a signature over the unpadded number is refused too.
    @Test func overlongAndSignedTimestampsAreTheFlat404OnEveryRoute() throws {
        let harness = try SyncHarness(configure: { $0.deviceLimit = RateLimit(rate: 1000, burst: 1000) })
        try harness.seed(["talk"], series: "conf", state: .live)
        let device = try harness.device(for: .series("conf"))
        let now = harness.clock.seconds
        let flat = try harness.client().request("GET", "/api/sync/keys?session=talk").rawWithoutDate
        let routes = [
            ("GET", "/api/sync/keys?session=talk"), ("GET", "/api/sync/manifest?session=talk"), ("GET", "/api/sync/events?session=talk"),
            ("GET", "/api/sync/series/conf/manifest"), ("POST", "/api/sessions/talk/diag"),
        ]
        for (method, target) in routes {
            let body: [UInt8] = method == "POST" ? Array(#"{"build":"1.0","platform":"ios","online":true}"#.utf8) : []
            let signature = try device.header(method, target, body: body.isEmpty ? nil : body, at: now).split(separator: "=").last.map(String.init) ?? ""
            for header in [
                "00000000000000000000000000000000;ts=99999999999999999999;sig=AAAA",
                "\(device.id);ts=99999999999999999999;sig=\(signature)", "\(device.id);ts=9223372036854775808;sig=\(signature)",
                "\(device.id);ts=-9223372036854775808;sig=\(signature)", "\(device.id);ts=-0;sig=\(signature)",
                "\(device.id);ts=0\(now);sig=\(signature)", "\(device.id);ts=00\(now);sig=\(signature)", "\(device.id);ts=+\(now);sig=\(signature)",
            ] {
                let response = try harness.client().request(method, target, [("X-Pulse-Device", header)], body: body)
                #expect(response.rawWithoutDate == flat, "\(method) \(target) with \(header.split(separator: ";")[1]): \(response.status)")
            }
        }
        #expect(try harness.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: now).status == 200)
        #expect(try harness.client().request("GET", "/healthz").status == 200)
    }

    /// A timestamp more than 300 s away is `401 staleSignature`, the same bytes for a real device, an
    /// unknown one and a revoked one: it is answered before the device is looked up.
    @Test func aStaleTimestampIsTheSame401ForEveryDevice() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk"], state: .live)
        let device = try harness.device(for: .session("talk"))
        let revoked = try harness.device(for: .session("talk"))
        try harness.administration.revokeDevice(id: revoked.id)
        let stranger = TestDevice(id: try DeviceID.generate(), key: try P256.PrivateKey())
        let now = harness.clock.seconds
        var answers: [[UInt8]] = []
        for (who, at) in [(device, now - 301), (device, now + 301), (revoked, now - 400), (stranger, now + 10_000), (device, 0)] {
            let response = try harness.client().signed("GET", "/api/sync/keys?session=talk", by: who, at: at)
            #expect(response.status == 401 && response.json == ["error": "staleSignature"])
            answers.append(response.rawWithoutDate)
        }
        #expect(Set(answers).count == 1)
        // At the edge of the window it is accepted.
        #expect(try harness.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: now - 300).status == 200)
        #expect(try harness.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: now + 300).status == 200)
    }

    @Test func aDeviceGetsAboutFiveCallsASecond() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk"], state: .live)
        let device = try harness.device(for: .session("talk"))
        let other = try harness.device(for: .session("talk"))
        let client = try harness.client()
        let now = harness.clock.seconds
        for index in 0..<10 {
            let target = index % 2 == 0 ? "/api/sync/keys?session=talk" : "/api/sync/manifest?session=talk"
            #expect(try client.signed("GET", target, by: device, at: now).status == 200)
        }
        let limited = try client.signed("GET", "/api/sync/keys?session=talk", by: device, at: now)
        #expect(limited.status == 429 && limited.header("retry-after") == "1" && limited.json == ["error": "rateLimited"])
        #expect(try client.signed("GET", "/api/sync/keys?session=talk", by: other, at: now).status == 200)
        harness.clock.advance(by: 0.2)
        #expect(try client.signed("GET", "/api/sync/keys?session=talk", by: device, at: now).status == 200)
        #expect(try client.signed("GET", "/api/sync/keys?session=talk", by: device, at: now).status == 429)
    }

    /// Revoking a device takes effect at its next request, with the server's caches warm.
    @Test func aRevokedDeviceIsRefusedAtOnce() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk"], state: .live)
        let device = try harness.device(for: .session("talk"))
        let client = try harness.client()
        #expect(try client.signed("GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds).status == 200)
        // Through another instance on the same database (another process, the admin CLI).
        let peer = try SQLiteStorage(path: harness.data.databasePath)
        #expect(try peer.revokeDevice(id: device.id, at: harness.clock.seconds))
        #expect(try client.signed("GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds).status == 404)
    }
}
