import Foundation
import PulseServer
import PulseServerStorage
@testable import PulseServerCLI
import PulseCommandLine
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing

/// The built `pulse-server` executable, `serve` on a free loopback port, standard error collected line by
/// line (Scripts/test builds it before the tests run).
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    private(set) var port: UInt16 = 0
    /// Standard error's lines; the reader thread holds only this, not the ServerProcess, so dropping the
    /// ServerProcess stops the server (a thread holding `self` would keep it alive until the server exits).
    private let collected = Lines()
    private let errors = Pipe()

    static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pulse-server")
    }

    /// Runs `pulse-server serve --data <data> --listen 127.0.0.1:0 <arguments>` and waits for its address.
    /// - Parameter environment: added to this process's environment, from which PULSE_DATABASE_URL is
    ///   removed (one set where the tests run must not send the server to that database).
    /// `data` nil: no `--data` (a server on PostgreSQL needs none).
    init(data: String?, _ arguments: [String] = [], environment: [String: String] = [:], waitForStart: Bool = true) throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary.path), "build the pulse-server executable first (swift build)")
        process.executableURL = Self.binary
        process.arguments = ["serve"] + (data.map { ["--data", $0] } ?? []) + ["--listen", "127.0.0.1:0"] + arguments
        process.environment = ProcessInfo.processInfo.environment.filter { $0.key != ServerCommand.databaseVariable }
            .merging(environment) { $1 }
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        collected.readErr(from: errors.fileHandleForReading)
        guard waitForStart else { return }
        guard waitForLine("serving on "), let line = errorLines.first(where: { $0.contains("serving on ") }),
              let range = line.range(of: #"http://127\.0\.0\.1:(\d+)"#, options: .regularExpression),
              let port = UInt16(line[range].split(separator: ":").last ?? "")
        else {
            kill(process.processIdentifier, SIGKILL)
            throw RawHTTPConnection.Failure("pulse-server did not start: \(errorLines)")
        }
        self.port = port
    }

    /// Stops it for good even when a test failed with it hung: SIGTERM, then SIGKILL after two seconds.
    deinit {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        if !eventually(within: 2, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    var errorLines: [String] { collected.err }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    func client(source: String? = nil, timeout: Double = 10) throws -> RawHTTPConnection {
        try RawHTTPConnection(host: "127.0.0.1", port: Int(port), timeout: timeout, source: source)
    }

    func waitForLine(_ text: String, within seconds: Double = 10) -> Bool {
        eventually(within: seconds) { errorLines.contains { $0.contains(text) } }
    }

    /// The exit status, or nil if it still runs after `seconds`.
    func waitForExit(within seconds: Double) -> Int32? {
        guard eventually(within: seconds, { !process.isRunning }) else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
