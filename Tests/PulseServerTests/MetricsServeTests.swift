import Foundation
import PulseCommandLine
import PulseCore
import PulseCrypto
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing

/// `--metrics-listen` on the real executables: the counters move with real requests, the output passes
/// `promtool check metrics`, the listener answers only `/metrics`, and without the option nothing more listens.
@Suite(.serialized) struct MetricsServeTests {
    /// A data folder with the samples imported, a device code for the series, and the package.
    static func event(in folder: TestFolder) throws -> (data: String, package: URL, code: String) {
        let package = try ServeProcessTests.samplePackage(in: folder)
        let data = folder.url.appendingPathComponent("data").path
        #expect(CLI.run(["import", "--data", data, package.path]).code == 0)
        let code = try #require(CLI.run(["admin", "device-code", "create", "--data", data, "--series", "devconf-2026"]).out.first)
        return (data, package, code)
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs").standardizedFileURL

    /// The scrape config and the alert rules docs/operations.md suggests are what promtool accepts.
    @Test func theOperationsPageScrapeConfigAndAlertsPassPromtool() throws {
        try Scrape.requireTool(Scrape.promtoolPath)
        let page = try String(contentsOf: Self.docs.appendingPathComponent("operations.md"), encoding: .utf8)
        let folder = try TestFolder()
        for (start, file, command) in [("scrape_configs:\n", "prometheus.yml", "config"), ("groups:\n", "rules.yml", "rules")] {
            let from = try #require(page.range(of: start))
            let end = try #require(page.range(of: "```", range: from.lowerBound..<page.endIndex))
            let path = folder.path(file)
            try Data(page[from.lowerBound..<end.lowerBound].utf8).write(to: URL(fileURLWithPath: path))
            let checked = try Self.run(Scrape.promtoolPath, ["check", command, path], stdout: true)
            #expect(checked.status == 0 && checked.errors.contains("SUCCESS"), "\(command): \(checked.errors)")
        }
    }

    /// Enrolls with `code`; the device.
    static func enroll(_ server: MetricsProcess, code: String) throws -> TestDevice {
        let key = try P256.PrivateKey()
        let enrolled = try server.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: key))
        #expect(enrolled.status == 200)
        return TestDevice(id: try #require(enrolled.json?["deviceId"]?.stringValue), key: key)
    }

    @Test func theServerCountsEnrollmentsKeysAndRefusalsByReason() throws {
        let folder = try TestFolder()
        let (data, _, code) = try Self.event(in: folder)
        let server = try MetricsProcess("pulse-server", ["serve", "--data", data, "--access-log", "off"])
        let before = String(decoding: try server.scrape().body, as: UTF8.self)
        #expect(Scrape.value(before, #"pulse_enrollments_total{result="enrolled"}"#) == 0)
        #expect(Scrape.value(before, #"pulse_http_requests_total{route="/api/sync/keys",status="2xx"}"#) == 0)

        let device = try Self.enroll(server, code: code)
        let keys = try server.client().signed("GET", "/api/sync/keys?session=keynote", by: device, at: Self.now())
        #expect(keys.status == 200)
        // Refusals: a signature by another key, a stale one, none at all, and a session out of scope.
        let impostor = TestDevice(id: device.id, key: try P256.PrivateKey())
        #expect(try server.client().signed("GET", "/api/sync/keys?session=keynote", by: impostor, at: Self.now()).status == 404)
        #expect(try server.client().signed("GET", "/api/sync/keys?session=keynote", by: device, at: Self.now() - 3600).status == 401)
        #expect(try server.client().request("GET", "/api/sync/manifest?session=keynote").status == 404)
        #expect(try server.client().signed("GET", "/api/sync/keys?session=no-such-talk", by: device, at: Self.now()).status == 404)
        #expect(try server.client().request("GET", "/api/sync/asset/\(String(repeating: "ab", count: 32))").status == 404)

        let scrape = try server.scrape()
        #expect(scrape.status == 200)
        #expect(scrape.header("content-type") == "text/plain; version=0.0.4; charset=utf-8")
        let expected: [(String, Double)] = [
            (#"pulse_enrollments_total{result="enrolled"}"#, 1),
            (#"pulse_http_requests_total{route="/api/sync/enroll",status="2xx"}"#, 1),
            (#"pulse_http_requests_total{route="/api/sync/keys",status="2xx"}"#, 1),
            (#"pulse_http_requests_total{route="/api/sync/keys",status="4xx"}"#, 3),
            (#"pulse_http_requests_total{route="/api/sync/manifest",status="4xx"}"#, 1),
            (#"pulse_http_requests_total{route="/api/sync/asset/:hash",status="4xx"}"#, 1),
            (#"pulse_http_request_duration_seconds_count{route="/api/sync/keys"}"#, 4),
            (#"pulse_sync_refusals_total{reason="bad-signature"}"#, 1),
            (#"pulse_sync_refusals_total{reason="stale"}"#, 1),
            (#"pulse_sync_refusals_total{reason="bad-header"}"#, 1),
            (#"pulse_sync_refusals_total{reason="out-of-scope"}"#, 1),
            (#"pulse_sync_refusals_total{reason="no-route"}"#, 1),
            (#"pulse_keys_released_per_answer_count"#, 1),
            (#"pulse_keys_released_per_answer_bucket{le="0"}"#, 1),  // nothing shown yet: no key released
            (#"pulse_write_duration_seconds_count"#, 1),  // the enrollment's write
            (#"pulse_build_info{version="\#(ToolVersion.current)"}"#, 1),
            ("pulse_event_streams_open", 0),
            ("pulse_write_queue_depth", 0),
        ]
        let text = try server.scrape(settledOn: expected)
        for (series, value) in expected {
            #expect(Scrape.value(text, series) == value, "\(series)")
        }
        // No raw path, device id or address became a label.
        #expect(!text.contains(device.id) && !text.contains("keynote") && !text.contains("127.0.0.1"))
        #expect((Scrape.value(text, "process_open_fds") ?? 0) > 0)
        #expect((Scrape.value(text, "process_resident_memory_bytes") ?? 0) > 1_000_000)
        #expect(Scrape.value(text, "process_cpu_seconds_total") != nil && Scrape.value(text, "process_start_time_seconds") != nil)
        #expect(Scrape.value(text, "pulse_storage_reconnects_total{connection=\"pool\"}") == nil)  // SQLite: no such family

        // The metrics listener answers /metrics only; the public port never answers it.
        let listener = try RawHTTPConnection(host: "127.0.0.1", port: Int(try #require(server.metricsPort)), timeout: 10)
        let head = try listener.request("HEAD", "/metrics")
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(try listener.request("GET", "/api/sync/keys").status == 404)
        #expect(try listener.request("POST", "/metrics").status == 405)
        #expect(try server.client().request("GET", "/metrics").status == 404)
        #expect(server.listeningPorts == [server.port, try #require(server.metricsPort)])
    }

    @Test func promtoolAcceptsBothServersOutput() throws {
        let folder = try TestFolder()
        let (data, package, code) = try Self.event(in: folder)
        let server = try MetricsProcess("pulse-server", ["serve", "--data", data, "--access-log", "off", "--public", package.path])
        let origin = try MetricsProcess("pulse-origin", ["--package", package.path, "--access-log", "off"])
        let device = try Self.enroll(server, code: code)
        _ = try server.client().signed("GET", "/api/sync/keys?session=keynote", by: device, at: Self.now())
        let manifest = try server.client().signed("GET", "/api/sync/manifest?session=keynote", by: device, at: Self.now())
        let hash = try #require(manifest.json?["slides"]?.arrayValue?.first?["assetHash"]?.stringValue)
        let first = try origin.client().request("GET", "/api/sync/asset/\(hash)")
        let second = try origin.client().request("GET", "/api/sync/asset/\(hash)")
        #expect(first.status == 200 && second.status == 200 && first.body == second.body)
        #expect(try origin.client().request("GET", "/api/sync/asset/\(String(repeating: "cd", count: 32))").status == 404)

        let operations = try String(contentsOf: Self.docs.appendingPathComponent("operations.md"), encoding: .utf8)
        for process in [server, origin] {
            let body = try process.scrape().body
            let (status, output) = try Scrape.promtool(body)
            #expect(status == 0, "promtool check metrics: \(output)")
            #expect(output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "promtool lint findings: \(output)")
            // Every family is on the operator's page.
            for line in String(decoding: body, as: UTF8.self).split(separator: "\n") where line.hasPrefix("# TYPE ") {
                let name = line.split(separator: " ")[2]
                #expect(operations.contains("`\(name)`"), "\(name) is not in docs/operations.md")
            }
        }
        let text = try origin.scrape(settledOn: [(#"pulse_http_requests_total{route="/api/sync/asset/:hash",status="2xx"}"#, 2)])
        let size = Double(first.body.count)
        #expect(Scrape.value(text, #"pulse_http_requests_total{route="/api/sync/asset/:hash",status="2xx"}"#) == 2)
        #expect(Scrape.value(text, #"pulse_origin_cache_misses_total{reason="verified"}"#) == 1)  // hashed for the first request
        #expect(Scrape.value(text, #"pulse_origin_cache_misses_total{reason="missing"}"#) == 1)
        #expect(Scrape.value(text, #"pulse_origin_cache_hits_total{tier="memory"}"#) == 1)
        #expect(Scrape.value(text, "pulse_origin_verifications_total") == 1)
        #expect(Scrape.value(text, "pulse_origin_corrupt_blobs_total") == 0)
        #expect((Scrape.value(text, "pulse_origin_sent_bytes_total") ?? 0) >= 2 * size)
        #expect(Scrape.value(text, "pulse_http_open_connections") != nil)
    }

    @Test func aBadMetricsAddressIsAClearStartErrorAndWithoutTheOptionNothingMoreListens() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        for bad in ["nonsense", "127.0.0.1", "127.0.0.1:99999", "300.1.1.1:9464", "example.com:9464"] {
            let result = CLI.run(["serve", "--data", data, "--metrics-listen", bad])
            #expect(result.code == 64, "\(bad): \(result.text)")
            #expect(result.err.first?.contains("error: serve: --metrics-listen must be host:port") == true, "\(bad): \(result.err)")
        }
        let origin = try Self.run("pulse-origin", ["--package", folder.url.path, "--metrics-listen", "nonsense"])
        #expect(origin.status == 64 && origin.errors.contains("--metrics-listen must be host:port"), "\(origin.errors)")

        // An address in use: one error line naming the option, and the server does not start.
        let plain = try MetricsProcess("pulse-server", ["serve", "--data", data, "--access-log", "off"], metrics: false)
        #expect(plain.listeningPorts == [plain.port])
        #expect(!plain.errorLines.contains { $0.contains("metrics") })
        let clash = try Self.run("pulse-server", ["serve", "--data", data, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:\(plain.port)"])
        #expect(clash.status == 1 && clash.errors.contains("error: --metrics-listen: cannot listen on 127.0.0.1:\(plain.port)"), "\(clash.errors)")
        #expect(!clash.errors.contains("serving on"))
    }

    /// Runs a built tool to its end: exit status and standard error.
    /// `tool` is a built tool's name or an absolute path; `stdout` collects standard output too.
    static func run(_ tool: String, _ arguments: [String], stdout: Bool = false) throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = tool.hasPrefix("/") ? URL(fileURLWithPath: tool) : MetricsProcess.binary(tool)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { $0.key != "PULSE_DATABASE_URL" }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = stdout ? errors : FileHandle.nullDevice
        try process.run()
        let printed = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, printed)
    }
}
