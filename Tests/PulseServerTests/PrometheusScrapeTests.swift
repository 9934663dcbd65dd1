import Foundation
import PulseCore
import PulseCrypto
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing

/// A real Prometheus (Debian's, installed by Scripts/bootstrap) scrapes pulse-server and pulse-origin every
/// second; after an enroll, a key fetch and a blob fetch its query API sees the counters move.
@Suite(.serialized) struct PrometheusScrapeTests {
    @Test func prometheusSeesTheCountersMove() throws {
        let folder = try TestFolder()
        let (data, package, code) = try MetricsServeTests.event(in: folder)
        let server = try MetricsProcess("pulse-server", ["serve", "--data", data, "--access-log", "off"])
        let origin = try MetricsProcess("pulse-origin", ["--package", package.path, "--access-log", "off"])
        let prometheus = try PrometheusProcess(
            folder: folder.url.appendingPathComponent("prometheus"),
            jobs: ["pulse-server": try #require(server.metricsPort), "pulse-origin": try #require(origin.metricsPort)])

        // Both targets up, and the counters' starting values scraped.
        let enrolled = #"pulse_enrollments_total{job="pulse-server",result="enrolled"}"#
        let keys = #"pulse_http_requests_total{job="pulse-server",route="/api/sync/keys",status="2xx"}"#
        let assets = #"pulse_http_requests_total{job="pulse-origin",route="/api/sync/asset/:hash",status="2xx"}"#
        let sent = #"pulse_origin_sent_bytes_total{job="pulse-origin"}"#
        #expect(try prometheus.waitFor(#"up{job="pulse-server"}"#, within: 60) { $0 == 1 }, "\(prometheus.log)")
        #expect(try prometheus.waitFor(#"up{job="pulse-origin"}"#, within: 30) { $0 == 1 }, "\(prometheus.log)")
        #expect(try prometheus.waitFor(enrolled, within: 30) { $0 == 0 })
        #expect(try prometheus.waitFor(keys, within: 30) { $0 == 0 })
        #expect(try prometheus.waitFor(assets, within: 30) { $0 == 0 })

        let device = try MetricsServeTests.enroll(server, code: code)
        let answer = try server.client().signed("GET", "/api/sync/keys?session=keynote", by: device, at: MetricsServeTests.now())
        #expect(answer.status == 200)
        let manifest = try server.client().signed("GET", "/api/sync/manifest?session=keynote", by: device, at: MetricsServeTests.now())
        let hash = try #require(manifest.json?["slides"]?.arrayValue?.first?["assetHash"]?.stringValue)
        let blob = try origin.client().request("GET", "/api/sync/asset/\(hash)")
        #expect(blob.status == 200)

        #expect(try prometheus.waitFor(enrolled, within: 30) { $0 == 1 })
        #expect(try prometheus.waitFor(keys, within: 30) { $0 == 1 })
        #expect(try prometheus.waitFor(assets, within: 30) { $0 == 1 })
        #expect(try prometheus.waitFor(sent, within: 30) { $0 >= Double(blob.body.count) })
        #expect(try prometheus.waitFor(#"pulse_build_info{job="pulse-origin"}"#, within: 5) { $0 == 1 })
        #expect(try prometheus.waitFor(#"process_open_fds{job="pulse-server"}"#, within: 5) { $0 > 0 })
    }
}

/// `prometheus` on a free loopback port, scraping `jobs` (name → metrics port on 127.0.0.1) every second,
/// its data in `folder`.
final class PrometheusProcess: @unchecked Sendable {
    let process = Process()
    let port: UInt16
    let logFile: URL

    init(folder: URL, jobs: [String: UInt16]) throws {
        try Scrape.requireTool(Scrape.prometheusPath)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        port = try NginxProxy.freePort()
        var config = "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
        for (job, metricsPort) in jobs.sorted(by: { $0.key < $1.key }) {
            config += "  - job_name: \(job)\n    static_configs:\n      - targets: ['127.0.0.1:\(metricsPort)']\n"
        }
        let configFile = folder.appendingPathComponent("prometheus.yml")
        try Data(config.utf8).write(to: configFile)
        logFile = folder.appendingPathComponent("prometheus.log")
        #expect(FileManager.default.createFile(atPath: logFile.path, contents: nil))
        process.executableURL = URL(fileURLWithPath: Scrape.prometheusPath)
        process.arguments = [
            "--config.file=\(configFile.path)", "--storage.tsdb.path=\(folder.appendingPathComponent("data").path)",
            "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
        ]
        let log = try FileHandle(forWritingTo: logFile)
        process.standardOutput = log
        process.standardError = log
        try process.run()
    }

    deinit {
        guard process.isRunning else { return }
        process.terminate()
        if !eventually(within: 5, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// The value of instant query `query` (the first series), nil while it has none or Prometheus is not up.
    func value(_ query: String) -> Double? {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        guard let encoded = query.addingPercentEncoding(withAllowedCharacters: allowed),
              let connection = try? RawHTTPConnection(host: "127.0.0.1", port: Int(port), timeout: 5),
              let response = try? connection.request("GET", "/api/v1/query?query=\(encoded)"), response.status == 200,
              let json = try? JSONValue.parse(Data(response.body)),
              let sample = json["data"]?["result"]?.arrayValue?.first?["value"]?.arrayValue, sample.count == 2,
              let text = sample[1].stringValue
        else { return nil }
        return Double(text)
    }

    /// True once `query`'s value satisfies `condition`, within `seconds`.
    func waitFor(_ query: String, within seconds: Double, _ condition: (Double) -> Bool) throws -> Bool {
        eventually(within: seconds) {
            guard process.isRunning else { return false }
            return value(query).map(condition) ?? false
        }
    }
}
