import Foundation
import PulseSystem

/// Scripts/lib/keepalive-clients: a steady keep-alive load from a separate process (its sockets and its time are
/// not the test process's), and every request that got no answer: which connection, which request on it, when.
/// Issue 23's measure, used on PulseHTTPServer in process and on the real pulse-origin and pulse-server.
public struct KeepAliveLoad: Sendable {
    public struct Result: Sendable {
        public var answered: Int
        public var statuses: [String: Int]
        public var connectErrors: Int
        /// One line per request without an answer, as the script printed it.
        public var drops: [String]
    }

    public var port: UInt16
    public var connections: Int
    public var seconds: Double
    public var path: String
    /// Sent with every request, `Name: value` each.
    public var headers: [String]

    public init(port: UInt16, connections: Int, seconds: Double, path: String = "/", headers: [String] = []) {
        self.port = port
        self.connections = connections
        self.seconds = seconds
        self.path = path
        self.headers = headers
    }

    public func run() throws -> Result {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Scripts/lib/keepalive-clients")
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", script.path, "--port", "\(port)", "--path", path, "--connections", "\(connections)",
            "--seconds", "\(seconds)",
        ] + headers.flatMap { ["--header", $0] }
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        guard process.terminationStatus == 0, let first = lines.first,
              let totals = try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any]
        else { throw RawHTTPConnection.Failure("keepalive-clients failed (exit \(process.terminationStatus)): \(lines.first ?? "")") }
        return Result(
            answered: totals["answered"] as? Int ?? 0, statuses: totals["statuses"] as? [String: Int] ?? [:],
            connectErrors: totals["connect_errors"] as? Int ?? 0, drops: Array(lines.dropFirst()))
    }
}
