import Foundation
import PulseHTTPServer
import PulseSystem
import PulseTestSupport
import Testing

/// Thousands of event streams on one server: the clients run in a separate process (Scripts/lib/stream-clients) so
/// both ends fit their descriptor limits. `PULSE_STREAMS=10000` (Scripts/bench/streams) measures more.
@Suite(.serialized) struct StreamScaleTests {
    static let count = ProcessInfo.processInfo.environment["PULSE_STREAMS"].flatMap(Int.init) ?? 2000

    @Test func thousandsOfStreamsGetAnEventWithinASecond() throws {
        let fanOut = FanOut()
        let server = try TestServer({
            $0.maxConnections = Self.count + 100
            $0.maxConnectionsPerIP = 0
            $0.streamHeartbeatSeconds = 0
        }) { request in
            request.target == Array("/events".utf8) ? FanOut.response(fanOut.stream()) : text(200, "plain")
        }
        let threadsBefore = Self.threads()
        let memoryBefore = Self.residentBytes()

        let clients = try StreamClients(port: server.port, streams: Self.count)
        let ready = try clients.next()
        #expect(ready["ready"] as? Int == Self.count, "\(ready)")
        #expect(eventually(within: 10) { fanOut.openCount == Self.count })
        #expect(server.server.openStreams == Self.count)
        let threadsOpen = Self.threads()
        let memoryOpen = Self.residentBytes()

        // Ordinary requests are still answered at once.
        let started = Date()
        #expect(try server.client().request("GET", "/plain").text == "plain")
        let plainSeconds = Date().timeIntervalSince(started)
        #expect(plainSeconds < 1)

        // One event, written once per stream from another thread.
        let sent = Self.monotonicSeconds()
        let sender = Thread { fanOut.broadcast("data: slide 4\n\n") }
        sender.start()
        let received = try clients.next()
        let last = try #require(received["last"] as? Double)
        #expect(received["received"] as? Int == Self.count, "\(received)")
        let latency = last - sent
        #expect(latency < 1, "the last stream got the event \(latency) s after it was sent")
        let memoryAfter = Self.residentBytes()

        // SIGTERM's drain: every stream ends cleanly.
        try clients.command("wait-end")
        let stopStarted = Date()
        server.server.shutdown(drainSeconds: 10)
        let stopSeconds = Date().timeIntervalSince(stopStarted)
        let ended = try clients.next()
        #expect(ended["ended"] as? Int == Self.count, "\(ended)")
        #expect(eventually(within: 10) { fanOut.ended.count == Self.count })
        #expect(fanOut.ended.allSatisfy { $0 == .serverStopping })

        let perStream = Double(memoryOpen - memoryBefore) / Double(Self.count)
        print("""
            stream scale: \(Self.count) streams open in \(ready["seconds"] ?? "?") s; threads \(threadsBefore) -> \(threadsOpen); \
            resident memory +\((memoryOpen - memoryBefore) >> 20) MB (\(Int(perStream)) bytes per stream), \
            +\((memoryAfter - memoryOpen) >> 10) KB after the event; a plain GET meanwhile took \
            \(String(format: "%.1f", plainSeconds * 1000)) ms; the event reached all streams in \
            \(String(format: "%.0f", latency * 1000)) ms; the graceful stop took \(String(format: "%.2f", stopSeconds)) s
            """)
        // No thread per stream: the server's threads are a fixed pool (suites running in parallel start a few).
        #expect(threadsOpen - threadsBefore < max(50, Self.count / 40))
        // Memory per stream: libmicrohttpd's connection (8 KB pool) and ours, well under 32 KB.
        #expect(perStream < 32 * 1024)
        #expect(stopSeconds < 5)
    }

    static func threads() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    }

    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

/// Scripts/lib/stream-clients, driven over its stdin and stdout.
final class StreamClients {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer: [UInt8] = []

    init(port: UInt16, streams: Int) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Scripts/lib/stream-clients")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--port", "\(port)", "--streams", "\(streams)"]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    /// The next JSON line.
    func next() throws -> [String: Any] {
        while true {
            if let newline = buffer.firstIndex(of: 0x0a) {
                let line = Data(buffer[..<newline])
                buffer.removeFirst(newline + 1)
                return (try JSONSerialization.jsonObject(with: line) as? [String: Any]) ?? [:]
            }
            let data = output.fileHandleForReading.availableData
            guard !data.isEmpty else { throw RawHTTPConnection.Failure("stream-clients exited") }
            buffer += data
        }
    }

    func command(_ text: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((text + "\n").utf8))
    }
}
