import Foundation
import PulseCore
import PulseCrypto
import PulseSystem
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseSyncAPI

/// `POST /api/sync/enroll`, `GET /api/sync/device-cert-keys`, `GET /api/sync/time` over a real socket.
@Suite struct EnrollRouteTests {
    @Test func aDeviceCodeEnrollsOneDeviceWithACertificateTheAppCanCheck() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk"])
        let code = try harness.code(.session("talk"))
        let key = try P256.PrivateKey()
        let client = try harness.client()
        let response = try client.request("POST", "/api/sync/enroll", [("Content-Type", "application/json")],
                                          body: TestDevice.enrollBody(token: code, key: key, name: "Ada's iPhone"))
        #expect(response.status == 200)
        #expect(response.header("cache-control") == "no-store")
        let id = try #require(response.json?["deviceId"]?.stringValue)
        #expect(DeviceID.isValid(id))
        let certificate = try #require(response.json?["deviceCert"]?.stringValue)

        // The app checks the certificate with the published key, found by kid.
        let keys = try client.request("GET", "/api/sync/device-cert-keys")
        #expect(keys.status == 200 && keys.header("cache-control") == "public, max-age=300")
        let jwk = try #require(keys.json?["keys"]?.arrayValue?.first)
        #expect(jwk["kty"] == "EC" && jwk["crv"] == "P-256" && jwk["alg"] == "ES256" && jwk["kid"]?.stringValue == harness.certificateKey.keyId)
        let x = try #require(jwk["x"]?.stringValue.flatMap { Base64URL.decode($0) })
        let y = try #require(jwk["y"]?.stringValue.flatMap { Base64URL.decode($0) })
        let published = try P256.PublicKey(x963Representation: [4] + x + y)
        let claims = try #require(DeviceCertificate.verify(certificate, publicKey: published))
        #expect(claims["deviceId"]?.stringValue == id)
        #expect(claims["publicKey"]?.stringValue == Data(key.publicKey.derRepresentation).base64EncodedString())
        #expect(claims["platform"] == "ios" && claims["name"] == "Ada's iPhone" && claims["kid"]?.stringValue == jwk["kid"]?.stringValue)
        #expect(claims["scope"] == ["kind": "session", "id": "talk"])
        #expect(claims["issuedAt"]?.intValue == Int(harness.clock.seconds))

        // The key the enrollment parsed is kept: the device's first signed request parses nothing.
        #expect(harness.sync.cache.held.publicKeys == 1)
        // Stored with its scope; the code is spent: the same request again is the flat 404.
        #expect(try harness.storage.device(id: id)?.scope == .session("talk"))
        let again = try client.request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: try P256.PrivateKey()))
        #expect(again.status == 404 && again.text == #"{"error":"notFound"}"#)
        // Typing is forgiving: lower case, no hyphens. With the same key it is this enrollment asked again (its
        // answer was lost): the same device, nothing more spent.
        let typed = code.lowercased().replacingOccurrences(of: "-", with: "")
        let retried = try client.request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: typed, key: key))
        #expect(retried.status == 200 && retried.json?["deviceId"]?.stringValue == id, "\(retried.text)")
        let retriedCertificate = try #require(retried.json?["deviceCert"]?.stringValue)
        let retriedClaims = try #require(DeviceCertificate.verify(retriedCertificate, publicKey: published))
        #expect(retriedClaims == claims)
        #expect(try harness.storage.devices().count == 1)
    }

    @Test func everyBadTokenIsTheSameFlat404() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk"], series: "conf")
        let expired = try harness.administration.createDeviceCode(scope: .session("talk"), lifetime: 60).text
        let revoked = try harness.code(.session("talk"))
        try harness.administration.revokeToken(revoked)
        let used = try harness.code(.session("talk"))
        _ = try harness.enroll(used)
        let full = try harness.administration.createRegistrationToken(series: "conf", maxDevices: 1).text
        _ = try harness.enroll(full)
        let staff = try harness.staffToken()
        harness.clock.advance(by: 61)
        let key = try P256.PrivateKey()
        var answers: [[UInt8]] = []
        for token in [expired, revoked, used, full, staff, "ABCD-EFGH-JKMN", String(repeating: "A", count: 43), "nonsense", ""] {
            let response = try harness.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: token, key: key))
            #expect(response.status == 404, "\(token.prefix(6))")
            answers.append(response.rawWithoutDate)
        }
        // Byte for byte the flat "no" of every device-scoped route (an unknown route answers it too).
        answers.append(try harness.client().request("GET", "/api/sync/nothing-here").rawWithoutDate)
        #expect(Set(answers).count == 1)
    }

    @Test func aRegistrationTokenIsDurableUpToItsCap() throws {
        let harness = try SyncHarness()
        try harness.seed(["a", "b"], series: "conf")
        let token = try harness.administration.createRegistrationToken(series: "conf", maxDevices: 3).text
        let devices = try (0..<3).map { _ in try harness.enroll(token) }
        #expect(Set(devices.map(\.id)).count == 3)
        #expect(throws: RawHTTPConnection.Failure.self) { try harness.enroll(token) }
        #expect(try harness.storage.device(id: devices[0].id)?.scope == .series("conf"))
    }

    /// Bad public keys: every invalid public key of Wycheproof's ecdh_secp256r1_test.json (other curves,
    /// off-curve points, bad encodings), the point at infinity, hybrid and truncated points, base64 that
    /// is not, another algorithm: `400 {"error":"badKey"}`, and no device.
    @Test func badPublicKeysAre400BadKey() throws {
        let harness = try SyncHarness(configure: { $0.enrollLimit = RateLimit(rate: 1000, burst: 1000) })
        try harness.seed(["talk"])
        let code = try harness.code(.session("talk"))
        let root = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/wycheproof/ecdh_secp256r1_test.json").standardizedFileURL))
        var keys: [String] = []
        var seen = Set<String>()
        for group in root["testGroups"]?.arrayValue ?? [] {
            for test in group["tests"]?.arrayValue ?? [] where test["result"]?.stringValue == "invalid" {
                guard let der = test["public"]?.stringValue.flatMap({ Hex.decode($0) }), !der.isEmpty else { continue }
                let text = Data(der).base64EncodedString()
                if seen.insert(text).inserted { keys.append(text) }
            }
        }
        #expect(keys.count >= 30)
        let prefix: [UInt8] = [
            0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
            0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
        ]
        let good = try P256.PrivateKey().publicKey.derRepresentation
        keys += [
            Data(prefix + [0x04] + [UInt8](repeating: 0, count: 64)).base64EncodedString(),  // infinity as 04‖0‖0
            Data([0x30, 0x19] + prefix[2..<23] + [0x03, 0x02, 0x00, 0x00]).base64EncodedString(),  // 00: the point at infinity
            Data(prefix + [0x06] + good.suffix(64)).base64EncodedString(),  // hybrid form
            Data(good.dropLast()).base64EncodedString(),  // truncated
            Data(good + [0]).base64EncodedString(),  // trailing byte
            "not base64!", "", "-" + Data(good).base64EncodedString().dropFirst(),  // base64url is not base64
        ]
        for text in keys {
            let body = JSONValue.object(["token": .string(code), "publicKey": .string(text), "platform": "ios", "name": "x"]).canonicalBytes
            let response = try harness.client().request("POST", "/api/sync/enroll", body: body)
            #expect(response.status == 400 && response.text == #"{"error":"badKey"}"#, "\(text.prefix(24))…: \(response.status)")
        }
        #expect(try harness.storage.devices().isEmpty)
        // The code is still good.
        _ = try harness.enroll(code)
    }

    @Test func malformedBodiesName400TheField() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk"])
        let code = try harness.code(.session("talk"))
        let key = Data(try P256.PrivateKey().publicKey.derRepresentation).base64EncodedString()
        let cases: [(String, String)] = [
            ("{", "body"), ("[]", "body"), ("\"x\"", "body"), ("", "body"), ("{}", "token"),
            (#"{"token": 5, "publicKey": "\#(key)", "platform": "ios", "name": "x"}"#, "token"),
            (#"{"token": "\#(code)", "platform": "ios", "name": "x"}"#, "publicKey"),
            (#"{"token": "\#(code)", "publicKey": "\#(key)", "name": "x"}"#, "platform"),
            (#"{"token": "\#(code)", "publicKey": "\#(key)", "platform": "iOS 18!", "name": "x"}"#, "platform"),
            (#"{"token": "\#(code)", "publicKey": "\#(key)", "platform": "ios"}"#, "name"),
            (#"{"token": "\#(code)", "publicKey": "\#(key)", "platform": "ios", "name": ""}"#, "name"),
            (#"{"token": "\#(code)", "publicKey": "\#(key)", "platform": "ios", "name": "a\u001b[2Jb"}"#, "name"),
            (#"{"token": "\#(code)", "publicKey": "\#(key)", "platform": "ios", "name": "\#(String(repeating: "n", count: 101))"}"#, "name"),
        ]
        for (body, field) in cases {
            let response = try harness.client().request("POST", "/api/sync/enroll", body: Array(body.utf8))
            #expect(response.status == 400, "\(body.prefix(30))")
            #expect(response.json == ["error": "badRequest", "field": .string(field)], "\(body.prefix(30)): \(response.text)")
        }
        // Wrong method, huge body.
        let wrongMethod = try harness.client().request("GET", "/api/sync/enroll")
        #expect(wrongMethod.status == 405 && wrongMethod.header("allow") == "POST")
        let huge = try harness.client().request("POST", "/api/sync/enroll", body: [UInt8](repeating: 0x20, count: 17 * 1024))
        #expect(huge.status == 413)
        #expect(try harness.storage.devices().isEmpty)
    }

    /// Issue 17, item 4: characters that reorder or break a listing line are refused in a name at enrollment
    /// (400 naming the field) and in a diag sample's build; names people really use (quotes, emoji joined with
    /// U+200D, right-to-left script) are kept.
    @Test func namesThatWouldFakeListingLinesAreRefused() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk"], state: .live)
        let code = try harness.code(.session("talk"))
        let hidden: [UInt32] = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x2028, 0x2029,
                                0x200e, 0x200f, 0x061c, 0x0000, 0x0009, 0x000a, 0x000d, 0x001b, 0x007f, 0x0085, 0x009b, 0x200b, 0x2060, 0xfeff]
        for value in hidden {
            let name = "Ada" + String(Character(Unicode.Scalar(value)!)) + "phone"
            let response = try harness.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: try P256.PrivateKey(), name: name))
            #expect(response.status == 400 && response.json == ["error": "badRequest", "field": "name"], "U+\(String(value, radix: 16)): \(response.text)")
        }
        #expect(try harness.storage.devices().isEmpty)
        let device = try harness.enroll(code, name: #"Ada "work" 👩‍💻 phone — هاتف"#)
        for value in [0x202e, 0x2028] as [UInt32] {
            let body = JSONValue.object(["build": .string("2.4" + String(Character(Unicode.Scalar(value)!)) + "1"), "platform": "ios", "online": true]).canonicalBytes
            let response = try harness.client().signed("POST", "/api/sessions/talk/diag", by: device, at: harness.clock.seconds, body: body)
            #expect(response.status == 400 && response.json == ["error": "badRequest", "field": "build"])
        }
    }

    @Test func enrollmentsAreRateLimitedPerClientAddress() throws {
        let harness = try SyncHarness(configure: { $0.enrollLimit = RateLimit(rate: 1, burst: 3) })
        try harness.seed(["talk"])
        let key = try P256.PrivateKey()
        for _ in 0..<3 {
            let response = try harness.client(source: "127.0.0.2").request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: "nope", key: key))
            #expect(response.status == 404)
        }
        let limited = try harness.client(source: "127.0.0.2").request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: "nope", key: key))
        #expect(limited.status == 429 && limited.header("retry-after") == "1" && limited.text == #"{"error":"rateLimited"}"#)
        // Another address has its own bucket; a second later the first has one token again.
        #expect(try harness.client(source: "127.0.0.3").request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: "nope", key: key)).status == 404)
        harness.clock.advance(by: 1)
        #expect(try harness.client(source: "127.0.0.2").request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: "nope", key: key)).status == 404)
    }

    /// 50 enrollments racing with one device code over HTTP: exactly one device.
    @Test func fiftyConcurrentEnrollsWithOneCodeMakeOneDevice() throws {
        let harness = try SyncHarness(configure: { $0.enrollLimit = RateLimit(rate: 1000, burst: 1000) })
        try harness.seed(["talk"])
        let code = try harness.code(.session("talk"))
        let statuses = Lines()
        DispatchQueue.concurrentPerform(iterations: 50) { _ in
            let status = (try? harness.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: try P256.PrivateKey())).status) ?? -1
            statuses.add(out: String(status))
        }
        #expect(statuses.out.sorted() == ["200"] + [String](repeating: "404", count: 49))
        #expect(try harness.storage.devices().count == 1)
    }

    @Test func timeIsPublicAndNeverCached() throws {
        let harness = try SyncHarness()
        let response = try harness.client().request("GET", "/api/sync/time")
        #expect(response.status == 200 && response.header("cache-control") == "no-store")
        #expect(response.json?["unixSeconds"]?.intValue == Int(harness.clock.seconds))
        #expect(response.json?["iso"]?.stringValue == "2027-01-15T08:00:00Z")
        let post = try harness.client().request("POST", "/api/sync/time")
        #expect(post.status == 405 && post.header("allow") == "GET, HEAD")
    }
}
