import Foundation
import PulsePostgresTesting
import PulseServer
import PulseServerStorage
import Testing

/// `Scripts/probe/server` against three `serve` instances on one PostgreSQL behind nginx (`InstanceFleet`):
/// everything it checks must hold on the shared backend too (issue 17). It takes a minute or two, so it runs
/// when asked: `Scripts/probe/server --fleet` (which sets PULSE_PROBE_FLEET=1 and runs this test).
@Suite(.serialized) struct MultiInstanceProbeTests {
    static let enabled = ProcessInfo.processInfo.environment["PULSE_PROBE_FLEET"] == "1"

    @Test(.enabled(if: enabled, "Scripts/probe/server --fleet runs it")) func theProbePassesAgainstThreeInstancesBehindNginx() throws {
        let fleet = try MultiInstanceTests.fleet(3)
        try fleet.seed(["talk", "other"], series: "conf")
        let staff = try fleet.staffToken()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL
        let process = Process()
        process.executableURL = root.appendingPathComponent("Scripts/probe/server")
        process.arguments = [
            "--url", "http://127.0.0.1:\(fleet.nginx.port)", "--staff-token", staff, "--session", "talk", "--instances", "3", "--behind-proxy",
            "--bin", ServerProcess.binary.deletingLastPathComponent().path, "--connections", "256",
        ] + (0..<3).flatMap { ["--log", fleet.folder.url.appendingPathComponent("access-\($0).log").path] }
        process.environment = ProcessInfo.processInfo.environment.merging(fleet.environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        print(text)
        // The servers' own standard error, checked for secrets as the probe checks the access logs.
        let errors = fleet.servers.flatMap(\.errorLines).joined(separator: "\n")
        #expect(!errors.contains(staff) && !errors.contains("Fatal error"), "a server's standard error holds a secret or a crash")
        #expect(fleet.servers.allSatisfy { $0.process.isRunning }, "an instance died during the probe")
        #expect(process.terminationStatus == 0, "probe-server failed against the fleet:\n\(text.split(separator: "\n").filter { $0.contains("FAIL") }.joined(separator: "\n"))")
    }
}
