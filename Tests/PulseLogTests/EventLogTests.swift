import Foundation
import Synchronization
import Testing
@testable import PulseLog

@Suite struct EventLogTests {
    final class Captured: Sendable {
        let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        func add(_ line: String) { lines.withLock { $0.append(line) } }
    }

    /// Text: exactly the lines the servers always wrote.
    @Test func textLinesAreAsBefore() {
        let captured = Captured()
        let log = EventLog(service: "pulse-server", version: "1.0", format: .text) { captured.add($0) }
        log.info("serving on http://127.0.0.1:8080 (data /d, 2 threads, pid 7)")
        log.info("SIGHUP: access log /l reopened", ["pulse.signal": "SIGHUP"])
        log.alarm("database unavailable answering GET /api/sync/keys: gone")
        log.error("still not stopped 20 s after the signal; exiting now")
        #expect(captured.all == [
            "pulse-server: serving on http://127.0.0.1:8080 (data /d, 2 threads, pid 7)",
            "pulse-server: SIGHUP: access log /l reopened",
            "pulse-server: database unavailable answering GET /api/sync/keys: gone",
            "pulse-server: error: still not stopped 20 s after the signal; exiting now",
        ])
    }

    @Test func jsonLinesCarrySeverityBodyAndAttributes() throws {
        let captured = Captured()
        let log = EventLog(service: "pulse-origin", version: "0.2.0", format: .json) { captured.add($0) }
        log.info("SIGTERM: finishing 0 responses in flight, then stopping", ["pulse.signal": "SIGTERM"])
        log.alarm("corrupt blob 3f…: \u{1b}[31m\u{202E}\nfake line")
        log.error("cannot open access log /x: EACCES")
        let lines = captured.all
        #expect(lines.count == 3)
        let objects = try lines.map { try LogLineTests.parse(Array(($0 + "\n").utf8)) }
        #expect(objects.map { $0["SeverityText"] as? String } == ["INFO", "WARN", "ERROR"])
        #expect(objects.map { $0["SeverityNumber"] as? Int } == [9, 13, 17])
        #expect(objects[0]["Body"] as? String == "SIGTERM: finishing 0 responses in flight, then stopping")
        #expect((objects[0]["Attributes"] as? [String: Any])?["pulse.signal"] as? String == "SIGTERM")
        #expect(objects[1]["Body"] as? String == "corrupt blob 3f…: \u{1b}[31m\u{202E}\nfake line")
        #expect(objects[1]["Attributes"] == nil)
        #expect(objects[2]["Body"] as? String == "cannot open access log /x: EACCES")
        #expect((objects[2]["Resource"] as? [String: Any])?["service.name"] as? String == "pulse-origin")
        #expect((objects[2]["Resource"] as? [String: Any])?["service.version"] as? String == "0.2.0")
    }
}
