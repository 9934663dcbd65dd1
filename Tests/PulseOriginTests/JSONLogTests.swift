import Foundation
import PulseHTTPServer
import PulseLog
import PulseSystem
import PulseSystemTesting
import PulseTestSupport
import Testing
@testable import PulseOrigin

/// Issue 19 item 3: `--log-format json` on the real executable: every access log and standard error line is
/// one JSON object with the OpenTelemetry names; the text format stays as it was.
@Suite(.serialized) struct JSONLogTests {
    /// One line: valid UTF-8, no control byte, a JSON object.
    static func object(_ line: String) throws -> [String: Any] {
        #expect(!line.utf8.contains { $0 < 0x20 || $0 == 0x7f }, "a control byte in \(line)")
        let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(parsed as? [String: Any], "not an object: \(line)")
    }

    static func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    @Test func everyLineIsOneJSONObject() throws {
        let package = try TestPackage.publicPart()
        let blob = TestPackage.randomBytes(3000)
        let hash = try package.addBlob(blob)
        try package.addAppConfig("acme", json: #"{"org":"acme"}"#)
        let logPath = package.publicRoot.appendingPathComponent("access.log").path
        let origin = try OriginProcess(["--package", package.publicRoot.path, "--access-log", logPath, "--log-format", "json"])
        let connect = { try RawHTTPConnection(host: "127.0.0.1", port: Int(origin.port)) }
        let first = try connect().request("GET", "/api/sync/asset/\(hash)")
        #expect(first.status == 200 && first.body == blob)
        let etag = try #require(first.header("ETag"))
        #expect(try connect().request("GET", "/api/sync/asset/\(hash)", [("If-None-Match", etag)]).status == 304)
        #expect(try connect().request("GET", "/nothing/here?x=1").status == 404)
        #expect(try connect().request("GET", "/api/sync/appconfig?org=acme").status == 200)
        // A hostile target: raw control bytes, a quote, a bidi override, invalid UTF-8.
        let hostile = try connect()
        try hostile.send(Array("GET /a\"\u{202E}".utf8) + [0x1b, 0xff, 0xfe] + Array("?q=\"},{ HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let hostileStatus = try hostile.readResponse().status
        origin.signal(SIGHUP)
        #expect(origin.waitForLine("SIGHUP: index.json read"))
        origin.signal(SIGTERM)
        #expect(origin.waitForExit(within: 10) == 0)

        let access = try Self.lines(logPath).map(Self.object)
        #expect(access.count == 5)
        // A line is written when its response is sent: two quick requests may log in either order, so find each.
        let attributes = access.compactMap { $0["Attributes"] as? [String: Any] }
        #expect(attributes.count == 5)
        func find(_ path: String, _ status: Int) throws -> [String: Any] {
            try #require(attributes.first { $0["url.path"] as? String == path && $0["http.response.status_code"] as? Int == status }, "\(path) \(status)")
        }
        let asset = try find("/api/sync/asset/\(hash)", 200)
        #expect(asset["pulse.note"] as? String == "verified")
        #expect(asset["http.route"] as? String == "/api/sync/asset/:hash")
        #expect(asset["http.request.method"] as? String == "GET")
        #expect(asset["http.response.body.size"] as? Int == 3000)
        #expect(asset["client.address"] as? String == "127.0.0.1")
        #expect((asset["http.server.request.duration"] as? Double).map { $0 >= 0 && $0 < 10 } == true)
        #expect(try find("/api/sync/asset/\(hash)", 304)["http.response.body.size"] as? Int == 0)
        let missing = try find("/nothing/here", 404)
        #expect(missing["url.query"] as? String == "x=1" && missing["pulse.note"] as? String == "no-route")
        #expect(try find("/api/sync/appconfig", 200)["pulse.note"] as? String == "appconfig")
        let hostileLine = try find("/a\"%E2%80%AE%1B%FF%FE", hostileStatus)
        #expect(hostileLine["url.query"] as? String == "q=\"},{")
        for line in access {
            #expect((line["Timestamp"] as? String)?.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$"#, options: .regularExpression) != nil)
            #expect(line["SeverityText"] as? String == "INFO" && line["SeverityNumber"] as? Int == 9)
            #expect((line["Resource"] as? [String: Any])?["service.name"] as? String == "pulse-origin")
            #expect((line["Resource"] as? [String: Any])?["service.version"] as? String != nil)
        }
        #expect(access.contains { $0["Body"] as? String == "GET /api/sync/asset/\(hash) 200" })

        let events = try origin.errorLines.map(Self.object)
        let bodies = events.compactMap { $0["Body"] as? String }
        #expect(bodies.count == events.count && events.count >= 4)
        #expect(bodies.first?.hasPrefix("serving \(package.publicRoot.path) on http://127.0.0.1:") == true)
        #expect(bodies.contains { $0.hasPrefix("SIGHUP: index.json read: 1 app configs") })
        #expect(bodies.contains { $0.hasPrefix("SIGTERM: finishing ") })
        #expect(bodies.last == "stopped")
        let signalled = events.filter { ($0["Attributes"] as? [String: Any])?["pulse.signal"] != nil }
        #expect(signalled.count >= 2)
        #expect(events.allSatisfy { ($0["Resource"] as? [String: Any])?["service.name"] as? String == "pulse-origin" })
    }

    /// An alarm (a blob whose bytes do not match its name) is a WARN line; the 500 it caused is a WARN too.
    @Test func alarmsAreWarnings() throws {
        let package = try TestPackage.publicPart()
        let hash = try package.addBlob(TestPackage.randomBytes(500))
        try package.flipBit(hash)
        let logPath = package.publicRoot.appendingPathComponent("access.log").path
        let origin = try OriginProcess(["--package", package.publicRoot.path, "--access-log", logPath, "--log-format", "json"])
        #expect(try RawHTTPConnection(host: "127.0.0.1", port: Int(origin.port)).request("GET", "/api/sync/asset/\(hash)").status == 500)
        #expect(origin.waitForLine(hash))
        origin.signal(SIGTERM)
        #expect(origin.waitForExit(within: 10) == 0)
        let alarm = try #require(try origin.errorLines.map(Self.object).first { ($0["Body"] as? String)?.contains(hash) == true })
        #expect(alarm["SeverityText"] as? String == "WARN" && alarm["SeverityNumber"] as? Int == 13)
        let access = try #require(try Self.lines(logPath).map(Self.object).first)
        #expect(access["SeverityText"] as? String == "WARN")
        #expect((access["Attributes"] as? [String: Any])?["pulse.note"] as? String == "corrupt")
    }

    /// Without the option, or with `text`, the lines are the text ones, as before.
    @Test func textStaysTheDefault() throws {
        let package = try TestPackage.publicPart()
        let hash = try package.addBlob(TestPackage.randomBytes(100))
        for extra in [[], ["--log-format", "text"]] {
            let logPath = package.publicRoot.appendingPathComponent("access-\(extra.count).log").path
            let origin = try OriginProcess(["--package", package.publicRoot.path, "--access-log", logPath] + extra)
            #expect(try RawHTTPConnection(host: "127.0.0.1", port: Int(origin.port)).request("GET", "/api/sync/asset/\(hash)").status == 200)
            origin.signal(SIGTERM)
            #expect(origin.waitForExit(within: 10) == 0)
            let line = try #require(try Self.lines(logPath).first)
            #expect(line.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ 127\.0\.0\.1 GET /api/sync/asset/[0-9a-f]{64} 200 100 \d+\.\d{3}ms verified$"#,
                               options: .regularExpression) != nil, "\(line)")
            #expect(origin.errorLines.first?.hasPrefix("pulse-origin: serving \(package.publicRoot.path) on http://127.0.0.1:") == true)
            #expect(origin.errorLines.last == "pulse-origin: stopped")
        }
    }

    /// Runs pulse-origin with `arguments` to its end: exit status and standard error's lines.
    static func run(_ arguments: [String]) throws -> (status: Int32, lines: [String]) {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pulse-origin")
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text.split(separator: "\n").map(String.init))
    }

    /// A start-up error is one ERROR line as JSON, with the exit status of the text one.
    @Test func aStartErrorIsOneJSONLine() throws {
        let missing = "/nonexistent/\(UUID().uuidString)"
        let text = try Self.run(["--package", missing])
        #expect(text.status == 1 && text.lines == ["pulse-origin: error: package folder \(missing) does not exist"])
        let json = try Self.run(["--package", missing, "--log-format", "json"])
        #expect(json.status == 1 && json.lines.count == 1)
        let line = try Self.object(try #require(json.lines.first))
        #expect(line["SeverityText"] as? String == "ERROR" && line["SeverityNumber"] as? Int == 17)
        #expect(line["Body"] as? String == "package folder \(missing) does not exist")
    }

    /// `--log-format bogus` is a usage error naming the allowed values, before anything starts.
    @Test func anUnknownFormatIsAUsageError() throws {
        let (status, lines) = try Self.run(["--package", "/nonexistent", "--log-format", "bogus"])
        #expect(status == 64)
        #expect(lines.first == #"pulse-origin: error: --log-format must be text or json, got "bogus""#)
        #expect(lines.filter { $0.contains("error") }.count == 1)
    }

    /// The hostile request's line in both formats: neither holds a raw control byte.
    @Test func theAccessLogClassWritesTheFormatItWasGiven() throws {
        let folder = try TestFolder()
        let path = folder.path("access.log")
        let log = try AccessLog.file(path, format: .json, resource: LogResource(serviceName: "pulse-origin", serviceVersion: "t"))
        log.record(HTTPExchange(
            client: Array("10.1.2.3".utf8), method: "\u{1b}[2J", target: Array("/a b\n\\c".utf8), status: 404, bodyBytes: 10,
            durationNanoseconds: 1_234_567, note: "miss", completed: false))
        let line = try #require(try Self.lines(path).first)
        let object = try Self.object(line)
        let attributes = try #require(object["Attributes"] as? [String: Any])
        #expect(attributes["url.path"] as? String == "/a%20b%0A\\c")
        #expect(attributes["http.request.method"] as? String == "\u{1b}[2J")
        #expect(attributes["http.server.request.duration"] as? Double == 0.001234)
        #expect(attributes["pulse.aborted"] as? Bool == true)
    }
}
