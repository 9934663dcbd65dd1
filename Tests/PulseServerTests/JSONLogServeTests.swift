import Foundation
import PulseCore
import PulseCrypto
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseServer

/// Issue 19 item 3 on the real executable: `serve --log-format json` writes every access log and standard
/// error line as one JSON object with OpenTelemetry names, and no secret in any of them.
@Suite(.serialized) struct JSONLogServeTests {
    static func object(_ line: String) throws -> [String: Any] {
        #expect(!line.utf8.contains { $0 < 0x20 || $0 == 0x7f }, "a control byte in \(line)")
        let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(parsed as? [String: Any], "not an object: \(line)")
    }

    @Test func everyLineIsOneJSONObjectWithoutASecret() throws {
        let folder = try TestFolder()
        let package = try ServeProcessTests.samplePackage(in: folder)
        let data = folder.url.appendingPathComponent("data").path
        #expect(CLI.run(["import", "--data", data, package.path]).code == 0)
        let log = folder.url.appendingPathComponent("access.log").path
        let staff = try #require(CLI.run(["admin", "staff-token", "create", "--data", data]).out.first)
        let registration = try #require(CLI.run(["admin", "registration-token", "create", "--data", data, "--series", "devconf-2026"]).out.first)
        var secrets = [staff, registration, registration.replacingOccurrences(of: "-", with: "")]

        let server = try ServerProcess(data: data, ["--public", package.path, "--access-log", log, "--log-format", "json"])
        let key = try P256.PrivateKey()
        let enrolled = try server.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: registration, key: key, name: "Phone of Ana"))
        #expect(enrolled.status == 200)
        let device = TestDevice(id: try #require(enrolled.json?["deviceId"]?.stringValue), key: key)
        let now = Int64(Date().timeIntervalSince1970)
        let good = try device.header("GET", "/api/sync/manifest?session=keynote", at: now)
        let manifest = try server.client().request("GET", "/api/sync/manifest?session=keynote", [("X-Pulse-Device", good)])
        #expect(manifest.status == 200)
        // Signed for another target: refused with the flat 404.
        let wrong = try device.header("GET", "/api/sync/keys?session=other", at: now)
        #expect(try server.client().request("GET", "/api/sync/keys?session=keynote", [("X-Pulse-Device", wrong)]).status == 404)
        secrets += [good, wrong] + [good, wrong].map { String($0.split(separator: "=").last ?? "") }
        #expect(try server.client().request("GET", "/no/such/route").status == 404)
        #expect(try server.client().request("GET", "/api/staff/sessions/keynote", [("Authorization", "Bearer \(staff)")]).status == 200)
        let hash = try #require(manifest.json?["slides"]?.arrayValue?.first?["assetHash"]?.stringValue)
        #expect(try server.client().request("GET", "/api/sync/asset/\(hash)").status == 200)
        server.signal(SIGHUP)
        #expect(server.waitForLine("SIGHUP: access log"))
        server.signal(SIGTERM)
        #expect(server.waitForExit(within: 10) == 0)

        let accessText = try String(contentsOfFile: log, encoding: .utf8)
        let access = try accessText.split(separator: "\n").map { try Self.object(String($0)) }
        #expect(access.count == 6)
        // By path: a line is written when its response is sent, so two quick requests may log in either order.
        let attributes = try access.map { try #require($0["Attributes"] as? [String: Any]) }
        let byPath = Dictionary(attributes.map { (($0["url.path"] as? String) ?? "", $0) }) { first, _ in first }
        let expected: [(String, String, Int)] = [
            ("/api/sync/enroll", "POST", 200), ("/api/sync/manifest", "GET", 200), ("/api/sync/keys", "GET", 404), ("/no/such/route", "GET", 404),
            ("/api/staff/sessions/keynote", "GET", 200), ("/api/sync/asset/\(hash)", "GET", 200),
        ]
        #expect(byPath.count == expected.count)
        for (path, method, status) in expected {
            let line = try #require(byPath[path], "no line for \(path)")
            #expect(line["http.request.method"] as? String == method && line["http.response.status_code"] as? Int == status, "\(line)")
        }
        #expect(byPath["/api/sync/manifest"]?["url.query"] as? String == "session=keynote")
        #expect(byPath["/api/sync/keys"]?["pulse.note"] as? String == "no:bad-signature")
        #expect(byPath["/no/such/route"]?["pulse.note"] as? String == "no:route")
        // The route's template, never the raw path: the hash of an asset is not in http.route.
        #expect(byPath["/api/sync/asset/\(hash)"]?["http.route"] as? String == "/api/sync/asset/:hash")
        #expect(byPath["/api/sync/keys"]?["http.route"] as? String == "/api/sync/keys")
        #expect(byPath["/api/staff/sessions/keynote"]?["http.route"] as? String == "/api/staff/*")
        #expect(byPath["/no/such/route"]?["http.route"] as? String == "other")
        for line in access {
            #expect(line["SeverityText"] as? String == "INFO" && line["SeverityNumber"] as? Int == 9)
            #expect((line["Resource"] as? [String: Any])?["service.name"] as? String == "pulse-server")
            #expect((line["Attributes"] as? [String: Any])?["client.address"] as? String == "127.0.0.1")
            #expect((line["Attributes"] as? [String: Any])?["http.server.request.duration"] is Double)
        }

        let events = try server.errorLines.map(Self.object)
        let bodies = events.compactMap { $0["Body"] as? String }
        #expect(bodies.count == events.count)
        #expect(bodies.first?.hasPrefix("serving on http://127.0.0.1:\(server.port) (data \(data)") == true)
        #expect(bodies.contains { $0.hasPrefix("SIGHUP: access log \(log) reopened; index.json read") })
        #expect(bodies.contains { $0.hasPrefix("SIGTERM: closing 0 event streams") })
        #expect(bodies.last == "stopped")
        #expect(events.allSatisfy { ($0["Resource"] as? [String: Any])?["service.name"] as? String == "pulse-server" })

        // No token, signature or device text in any line.
        let everything = accessText + server.errorLines.joined(separator: "\n")
        for secret in secrets where secret.count >= 12 {
            #expect(!everything.contains(secret), "a secret is in the logs: \(secret.prefix(6))…")
        }
        #expect(!everything.contains("Phone") && !everything.contains("Bearer"))
    }

    /// A server that cannot start says so in one JSON line and exits as the text one does.
    @Test func aStartErrorIsOneJSONLine() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        _ = try DataFolder.prepare(data)
        chmod(data, 0o755)
        let server = try ServerProcess(data: data, ["--log-format", "json"], waitForStart: false)
        #expect(server.waitForExit(within: 10) == 1)
        #expect(server.errorLines.count == 1)
        let line = try Self.object(try #require(server.errorLines.first))
        #expect(line["SeverityText"] as? String == "ERROR" && line["SeverityNumber"] as? Int == 17)
        #expect(line["Body"] as? String == "\(data) is open to group or others (mode 0755); refusing to start: run chmod 700 \(data)")
    }

    /// `--log-format bogus`: the usage error naming the allowed values, exit 64; the text lines stay the default.
    @Test func anUnknownFormatIsAUsageErrorAndTextIsTheDefault() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let bogus = try ServerProcess(data: data, ["--log-format", "bogus"], waitForStart: false)
        #expect(bogus.waitForExit(within: 10) == 64)
        #expect(bogus.errorLines.first == #"pulse-server: error: serve: --log-format must be text or json, got "bogus""#)
        #expect(bogus.errorLines.filter { $0.contains("error") }.count == 1)

        let log = folder.url.appendingPathComponent("access.log").path
        let server = try ServerProcess(data: data, ["--access-log", log])
        #expect(try server.client().request("GET", "/api/sync/time").status == 200)
        server.signal(SIGTERM)
        #expect(server.waitForExit(within: 10) == 0)
        let line = try String(contentsOfFile: log, encoding: .utf8)
        #expect(line.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ 127\.0\.0\.1 GET /api/sync/time 200 \d+ \d+\.\d{3}ms time\n$"#, options: .regularExpression) != nil, "\(line)")
        #expect(server.errorLines.first?.hasPrefix("pulse-server: serving on http://127.0.0.1:") == true)
        #expect(server.errorLines.last == "pulse-server: stopped")
    }
}
