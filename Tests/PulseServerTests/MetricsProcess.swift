import Foundation
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing

/// A built server executable (`pulse-server` or `pulse-origin`) on free loopback ports, with
/// `--metrics-listen 127.0.0.1:0` unless told otherwise: its public and metrics ports read from its start
/// lines, its standard error collected line by line.
final class MetricsProcess: @unchecked Sendable {
    let process = Process()
    private(set) var port: UInt16 = 0
    private(set) var metricsPort: UInt16?
    /// Standard error's lines; the reader thread holds only this, not the MetricsProcess, so dropping the
    /// MetricsProcess stops the server (as `ServerProcess` does; holding `self` left servers running).
    private let collected = Lines()
    private let errors = Pipe()

    static func binary(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// `launcher`: a command that ends by exec'ing the server with the arguments that follow it (so the process
    /// is the server's), e.g. `unshare` with a shell that mounts something first.
    init(_ tool: String, _ arguments: [String], metrics: Bool = true, launcher: [String] = []) throws {
        let binary = Self.binary(tool)
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the \(tool) executable first (swift build)")
        let serverArguments = arguments + ["--listen", "127.0.0.1:0"] + (metrics ? ["--metrics-listen", "127.0.0.1:0"] : [])
        if let first = launcher.first {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = Array(launcher.dropFirst()) + [binary.path] + serverArguments
        } else {
            process.executableURL = binary
            process.arguments = serverArguments
        }
        process.environment = ProcessInfo.processInfo.environment.filter { $0.key != "PULSE_DATABASE_URL" }
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        collected.readErr(from: errors.fileHandleForReading)
        guard let port = waitForPort(after: "serving ") else {
            kill(process.processIdentifier, SIGKILL)
            throw RawHTTPConnection.Failure("\(tool) did not start: \(errorLines)")
        }
        self.port = port
        if metrics {
            guard let metricsPort = waitForPort(after: "metrics on ") else {
                kill(process.processIdentifier, SIGKILL)
                throw RawHTTPConnection.Failure("\(tool) printed no metrics address: \(errorLines)")
            }
            self.metricsPort = metricsPort
        }
    }

    deinit {
        guard process.isRunning else { return }
        process.terminate()
        if !eventually(within: 2, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    var errorLines: [String] { collected.err }

    private func waitForPort(after text: String) -> UInt16? {
        guard eventually(within: 20, { errorLines.contains { $0.contains(text) } }),
              let line = errorLines.first(where: { $0.contains(text) }),
              let range = line.range(of: #"http://127\.0\.0\.1:(\d+)"#, options: .regularExpression)
        else { return nil }
        return UInt16(line[range].split(separator: ":").last ?? "")
    }

    func client() throws -> RawHTTPConnection { try RawHTTPConnection(host: "127.0.0.1", port: Int(port), timeout: 10) }

    /// `GET /metrics` on the metrics listener.
    func scrape() throws -> RawHTTPResponse {
        let port = try #require(metricsPort)
        return try RawHTTPConnection(host: "127.0.0.1", port: Int(port), timeout: 10).request("GET", "/metrics")
    }

    /// The scrape once every series in `expected` has its value, or the last one after `seconds`. A request is
    /// counted in libmicrohttpd's completion callback, which can run just after the client has read the answer,
    /// so a scrape right after a request may not see it yet.
    func scrape(settledOn expected: [(String, Double)], within seconds: Double = 5) throws -> String {
        var text = String(decoding: try scrape().body, as: UTF8.self)
        _ = eventually(within: seconds) {
            if expected.allSatisfy({ Scrape.value(text, $0.0) == $0.1 }) { return true }
            text = String(decoding: (try? scrape().body) ?? [], as: UTF8.self)
            return expected.allSatisfy { Scrape.value(text, $0.0) == $0.1 }
        }
        return text
    }

    /// The TCP ports the process listens on, from /proc (its socket inodes against /proc/net/tcp{,6}).
    var listeningPorts: Set<UInt16> {
        let fds = "/proc/\(process.processIdentifier)/fd"
        let inodes = Set(((try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []).compactMap { fd -> String? in
            guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fds)/\(fd)"), link.hasPrefix("socket:[") else { return nil }
            return String(link.dropFirst(8).dropLast())
        })
        var ports: Set<UInt16> = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            // Read to the end: procfs hands these tables out a page per read, and a busy machine has many pages.
            let text = String(decoding: FileHandle(forReadingAtPath: table)?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                // local_address is fields[1] (hex ip:port), st fields[3] (0A = LISTEN), inode fields[9].
                guard fields.count > 9, fields[3] == "0A", inodes.contains(String(fields[9])),
                      let port = fields[1].split(separator: ":").last.flatMap({ UInt16($0, radix: 16) })
                else { continue }
                ports.insert(port)
            }
        }
        return ports
    }
}

/// Reading a scrape.
enum Scrape {
    /// The value of the sample line `series` (`name{labels}` exactly as exposed), nil when absent.
    static func value(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    /// `promtool check metrics` on an exposition: its exit status and what it printed.
    static func promtool(_ exposition: [UInt8]) throws -> (status: Int32, output: String) {
        try requireTool(promtoolPath)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: promtoolPath)
        process.arguments = ["check", "metrics"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        input.fileHandleForWriting.write(Data(exposition))
        try input.fileHandleForWriting.close()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: printed, as: UTF8.self))
    }

    static let promtoolPath = "/usr/bin/promtool"
    static let prometheusPath = "/usr/bin/prometheus"
    /// Scripts/bootstrap installs Debian's prometheus (with promtool), and the README's test command runs
    /// bootstrap: a missing tool fails the test that needs it (never a silent skip).
    static func requireTool(_ path: String) throws {
        try #require(FileManager.default.isExecutableFile(atPath: path), "\(path) is missing: run Scripts/bootstrap (Debian prometheus)")
    }
}
