import Foundation
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing

/// Issue 19 item 2, the rest of it: pulse-origin drains behind nginx as pulse-server does
/// (`aStoppingInstanceIsNotReadyAtOnceAndNginxReadersNeverFail`), and a pulse-server request still arriving when
/// the listener closes is answered.
@Suite(.serialized) struct DrainInFlightTests {
    /// Two pulse-origins behind nginx (the upstream settings docs/server.md gives); readers fetch a blob through
    /// nginx without pause while one origin gets SIGTERM: `/readyz` is 503 at once, the blob is still served for
    /// `--drain-delay`, it exits 0, and no reader sees anything but the blob.
    @Test func aStoppingOriginBehindNginxIsNotReadyAtOnceAndReadersNeverFail() throws {
        let folder = try TestFolder()
        let blob = OriginMetricsTests.random(100_000)
        let (root, names) = try OriginMetricsTests.publicPart(in: folder, blobs: [(blob, blob)])
        let path = "/api/sync/asset/" + names[0]
        let origins = try (0..<2).map { n in
            try MetricsProcess(
                "pulse-origin", ["--package", root.path, "--access-log", folder.path("access-\(n).log"), "--drain-delay", "2", "--shutdown-timeout", "5"],
                metrics: false)
        }
        let nginx = try NginxProxy(upstreams: origins.map(\.port), folder: folder.url.appendingPathComponent("nginx"))
        let direct = { (n: Int) in try RawHTTPConnection(host: "127.0.0.1", port: Int(origins[n].port), timeout: 2) }
        let nginxPort = Int(nginx.port)
        let throughNginx: @Sendable () throws -> RawHTTPConnection = { try RawHTTPConnection(host: "127.0.0.1", port: nginxPort, timeout: 10) }
        for n in 0..<2 { #expect(try direct(n).request("GET", "/readyz").status == 200) }

        let stop = Locked(false)
        let answers = Lines()  // per request through nginx: "200 <bytes>", or the error
        let readers = DispatchGroup()
        for _ in 0..<4 {
            DispatchQueue.global().async(group: readers) {
                var client = try? throughNginx()
                while !stop.withLock({ $0 }) {
                    do {
                        let connection = try client ?? throughNginx()
                        client = connection
                        let answer = try connection.request("GET", path)
                        answers.add(out: answer.body == blob ? "200 blob" : "\(answer.status) \(answer.body.count) bytes")
                    } catch {
                        client = nil
                        answers.add(out: "error: \(error)")
                    }
                    usleep(5_000)
                }
            }
        }
        Thread.sleep(forTimeInterval: 0.5)
        let signalled = Date()
        kill(origins[0].process.processIdentifier, SIGTERM)
        #expect(eventually(within: 2) { origins[0].errorLines.contains { $0.contains("draining: /readyz answers 503") } }, "\(origins[0].errorLines)")
        #expect(try direct(0).request("GET", "/readyz").status == 503)
        #expect(try direct(0).request("GET", path).body == blob, "a draining origin still serves")
        #expect(try direct(1).request("GET", "/readyz").status == 200)

        #expect(eventually(within: 12) { !origins[0].process.isRunning })
        origins[0].process.waitUntilExit()
        #expect(origins[0].process.terminationStatus == 0)
        #expect(Date().timeIntervalSince(signalled) >= 2, "the listener closed before --drain-delay was over")
        Thread.sleep(forTimeInterval: 0.5)  // readers go on through nginx after it is gone
        stop.withLock { $0 = true }
        readers.wait()
        let all = answers.out
        #expect(all.count > 100, "too few requests to tell: \(all.count)")
        #expect(all.allSatisfy { $0 == "200 blob" }, "failures through nginx: \(all.filter { $0 != "200 blob" }.prefix(5))")
        let served = try String(contentsOfFile: folder.path("access-0.log"), encoding: .utf8).split(separator: "\n")
        #expect(served.contains { $0.contains(path) } && served.contains { $0.contains("/readyz") && $0.contains(" 503 ") })
        withExtendedLifetime(nginx) {}
    }

    /// A request whose body is still on its way when the listener closes (`--drain-delay 0`: at once on SIGTERM)
    /// is read to its end and answered, a write included, before the server exits 0; a new connection is refused
    /// meanwhile.
    @Test func aRequestInFlightWhenTheListenerClosesIsStillAnswered() throws {
        let folder = try TestFolder()
        let data = folder.path("data")
        let token = try #require(CLI.run(["admin", "staff-token", "create", "--data", data]).out.first)
        let server = try ServerProcess(data: data, ["--access-log", folder.path("access.log"), "--shutdown-timeout", "10"])
        let body = Array(#"{"role":"moderator","session":null,"expires":"1h"}"#.utf8)
        let connection = try server.client(timeout: 10)
        try connection.send(
            "POST /api/staff/staff-tokens HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nAuthorization: Bearer \(token)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n")
        try connection.send(Array(body.prefix(10)))
        Thread.sleep(forTimeInterval: 0.3)  // the request line and head are in: the request is in flight

        server.signal(SIGTERM)
        #expect(eventually(within: 5) { (try? server.client(timeout: 1)) == nil }, "the listener closed")
        #expect(server.process.isRunning, "the server waits for the request in flight")
        try connection.send(Array(body.dropFirst(10)))
        let answer = try connection.readResponse()
        #expect(answer.status == 201, "\(answer.status) \(answer.text)")
        #expect(answer.json?["kind"] == "staff-token" && answer.json?["secret"]?.stringValue?.count == 43, "\(answer.text)")
        #expect(server.waitForExit(within: 12) == 0)
        let log = try String(contentsOfFile: folder.path("access.log"), encoding: .utf8)
        #expect(log.contains("POST /api/staff/staff-tokens") && log.contains(" 201 "), "\(log)")
    }
}
