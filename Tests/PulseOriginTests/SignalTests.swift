import Foundation
import PulseCrypto
import PulseSystem
import PulseSystemTesting
import PulseTestSupport
import Testing

/// Issue 10 item 8, on the real executable: every signal a process manager or an operator sends is handled or
/// ignored on purpose, with a line in the log, and SIGTERM stops it even with a FIFO under a blob's name.
@Suite(.serialized) struct SignalTests {
    @Test func signalsAreHandledDeliberately() throws {
        let package = try TestPackage.publicPart()
        try package.addAppConfig("acme", json: #"{"org":"acme"}"#)
        let logPath = package.publicRoot.appendingPathComponent("access.log").path
        let origin = try OriginProcess(["--package", package.publicRoot.path, "--access-log", logPath])
        #expect(try RawHTTPConnection(host: "127.0.0.1", port: Int(origin.port)).request("GET", "/healthz").status == 200)

        try package.addAppConfig("globex", json: #"{"org":"globex"}"#)
        origin.signal(SIGHUP)
        #expect(origin.waitForLine("SIGHUP: index.json read: 2 app configs"))

        // Log rotation: the file is moved away, SIGUSR1 opens a new one.
        let rotated = logPath + ".1"
        #expect(rename(logPath, rotated) == 0)
        origin.signal(SIGUSR1)
        #expect(origin.waitForLine("SIGUSR1: access log \(logPath) reopened"))
        #expect(try RawHTTPConnection(host: "127.0.0.1", port: Int(origin.port)).request("GET", "/api/sync/appconfig?org=globex").status == 200)
        #expect(eventually(within: 2) { (try? String(contentsOfFile: logPath, encoding: .utf8))?.contains("org=globex") == true })

        origin.signal(SIGUSR2)
        #expect(origin.waitForLine("SIGUSR2: ignored"))
        #expect(try RawHTTPConnection(host: "127.0.0.1", port: Int(origin.port)).request("GET", "/healthz").status == 200)

        // SIGQUIT is a graceful stop, not a crash report.
        origin.signal(SIGQUIT)
        #expect(origin.waitForExit(within: 5) == 0)
        let log = origin.errorLines.joined(separator: "\n")
        #expect(log.contains("SIGQUIT: finishing"))
        #expect(log.contains("stopped"))
        #expect(!log.localizedCaseInsensitiveContains("backtrace") && !log.localizedCaseInsensitiveContains("crash"))
    }

    @Test func sigtermStopsWithAFifoUnderABlobName() throws {
        let package = try TestPackage.publicPart()
        let name = SHA256.hex([4, 2, 0])
        let fifo = package.assets.appendingPathComponent(name).path
        #expect(mkfifo(fifo, 0o644) == 0)
        defer {
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        let origin = try OriginProcess(["--package", package.publicRoot.path, "--access-log", "off", "--shutdown-timeout", "2"])
        let clients = try (0..<2).map { _ in try RawHTTPConnection(host: "127.0.0.1", port: Int(origin.port), timeout: 5) }
        for client in clients { try client.send("GET /api/sync/asset/\(name) HTTP/1.1\r\nHost: x\r\n\r\n") }
        for client in clients { #expect(try client.readResponse().status == 500) }
        #expect(try RawHTTPConnection(host: "127.0.0.1", port: Int(origin.port), timeout: 2).request("GET", "/healthz").status == 200)
        origin.signal(SIGTERM)
        #expect(origin.waitForExit(within: 4) == 0)
    }
}

extension SignalTests {
    /// Issue 19 item 2 on the real executable: SIGTERM makes `/readyz` 503 at once (on a connection held from
    /// before too), blobs are served through `--drain-delay`, then it stops with 0.
    @Test func sigtermEndsReadinessAtOnceAndServesThroughTheDrainDelay() throws {
        let package = try TestPackage.publicPart()
        let blob = Array(repeating: UInt8(7), count: 1000)
        let hash = try package.addBlob(blob)
        let origin = try OriginProcess(["--package", package.publicRoot.path, "--access-log", "off", "--drain-delay", "2"])
        let held = try RawHTTPConnection(host: "127.0.0.1", port: Int(origin.port), timeout: 2)
        #expect(try held.request("GET", "/readyz").status == 200)
        let signalled = Date()
        origin.signal(SIGTERM)
        #expect(origin.waitForLine("SIGTERM: draining: /readyz answers 503; serving 2 s more"))
        let onHeld = try held.request("GET", "/readyz")
        #expect(onHeld.status == 503 && onHeld.header("Connection") == "close")
        let fresh = { try RawHTTPConnection(host: "127.0.0.1", port: Int(origin.port), timeout: 2) }
        #expect(try fresh().request("GET", "/readyz").status == 503)
        let served = try fresh()  // keep-alive goes on for everything but the probe
        #expect(try served.request("GET", "/livez").status == 200)
        #expect(try served.request("GET", "/api/sync/asset/\(hash)").body == blob)
        #expect(origin.waitForExit(within: 10) == 0)
        #expect(Date().timeIntervalSince(signalled) >= 2)
    }
}

extension SignalTests {
    /// Issue 19 item 4: under a `Type=notify` unit pulse-origin says READY=1 when it listens, RELOADING=1 and
    /// READY=1 around a SIGHUP (index.json read again), STOPPING=1 when it stops.
    @Test func readyReloadAndStopReachTheServiceManager() throws {
        let package = try TestPackage.publicPart()
        let socket = try NotifySocket()
        let origin = try OriginProcess(["--package", package.publicRoot.path, "--access-log", "off"], environment: socket.environment)
        let ready = try #require(socket.wait(for: "READY=1"))
        #expect(ready.contains { $0.hasPrefix("STATUS=serving ") && $0.hasSuffix("on http://127.0.0.1:\(origin.port)") })
        origin.signal(SIGHUP)
        #expect(socket.wait(for: "RELOADING=1")?.contains { $0.hasPrefix("MONOTONIC_USEC=") } == true)
        #expect(socket.wait(for: "READY=1")?.contains { $0.contains("index.json read") } == true)
        origin.signal(SIGTERM)
        #expect(socket.wait(for: "STOPPING=1") != nil)
        #expect(origin.waitForExit(within: 10) == 0)
    }
}

/// The built `pulse-origin` executable on a free port, its standard error collected line by line.
final class OriginProcess: @unchecked Sendable {
    let process = Process()
    private(set) var port: UInt16 = 0
    private let lock = NSLock()
    private var lines: [String] = []
    private let errors = Pipe()

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pulse-origin")
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the pulse-origin executable first (swift build)")
        process.executableURL = binary
        process.arguments = arguments + ["--listen", "127.0.0.1:0"]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        let reader = errors.fileHandleForReading
        try process.run()
        Thread { [self] in
            var pending = Data()
            while true {
                let data = reader.availableData
                if data.isEmpty { return }
                pending += data
                while let newline = pending.firstIndex(of: 0x0a) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = pending[(newline + 1)...]
                    lock.withLock { lines.append(line) }
                }
            }
        }.start()
        guard waitForLine("serving "), let line = errorLines.first(where: { $0.contains("serving ") }),
              let range = line.range(of: #"http://127\.0\.0\.1:(\d+)"#, options: .regularExpression),
              let port = UInt16(line[range].split(separator: ":").last ?? "") else {
            process.terminate()
            throw RawHTTPConnection.Failure("pulse-origin did not start: \(errorLines)")
        }
        self.port = port
    }

    /// Stops it for good even when a test failed with it hung: SIGTERM, then SIGKILL after two seconds.
    deinit {
        guard process.isRunning else { return }
        process.terminate()
        if !eventually(within: 2, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
    }

    var errorLines: [String] { lock.withLock { lines } }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for a standard error line containing `text`.
    func waitForLine(_ text: String, within seconds: Double = 5) -> Bool {
        eventually(within: seconds) { errorLines.contains { $0.contains(text) } }
    }

    /// The exit status, or nil if it still runs after `seconds`.
    func waitForExit(within seconds: Double) -> Int32? {
        guard eventually(within: seconds, { !process.isRunning }) else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
