import Foundation
import PulseTestSupport
import Testing

/// Issue 20 on the real executable, as for pulse-server: the open-files limit is raised to the hard one at
/// start, and a `--max-connections` beyond what it allows is one clear start error.
@Suite struct OriginDescriptorLimitTests {
    static var binary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pulse-origin").path
    }

    /// `pulse-origin` under `ulimit` settings made by a shell that then execs it, run to its end.
    static func run(ulimit: String, _ arguments: [String]) throws -> (status: Int32, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        let command = ([binary] + arguments).map { "'\($0)'" }.joined(separator: " ")
        process.arguments = ["-c", "ulimit \(ulimit) && exec \(command)"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test func aMaximumBeyondTheHardLimitIsOneClearStartError() throws {
        let package = try TestPackage.publicPart()
        let (status, text) = try Self.run(
            ulimit: "-n 300", ["--package", package.publicRoot.path, "--listen", "127.0.0.1:0", "--threads", "2", "--max-connections", "1000"])
        #expect(status == 1)
        #expect(text.split(separator: "\n").count == 1, "\(text)")
        // 300 less the reserve (64) less 128 + 7 for the headroom, threads and listen socket.
        // Needed: 1000 + 128 + 7 + 64 = 1199.
        for part in ["pulse-origin: error: --max-connections 1000 needs an open-files limit of 1199",
                     "but it is 300 (hard limit), which allows 101 connections", "ulimit -n 1199", "LimitNOFILE=1199"] {
            #expect(text.contains(part), "\(part) missing from \(text)")
        }
    }
}
