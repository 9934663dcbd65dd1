import Foundation
import PulseSystem
import PulseSystemTesting
import PulseTestSupport
import SyncTestSupport
import Testing

/// Issue 19 item 4: the systemd units in deploy/ verify, score "OK" or better on systemd's own exposure scale, and
/// their command lines start the real executables, which speak the notification protocol of `Type=notify`; the
/// logrotate snippet parses.
@Suite(.serialized) struct DeployTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL
    /// The servers' units (`Type=notify`); `services` adds the backup's oneshot, `timers` its timer.
    static let units = ["pulse-server.service", "pulse-origin.service"]
    static let services = units + ["pulse-server-backup.service"]
    static let timers = ["pulse-server-backup.timer"]
    static var binaries: URL { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent() }

    /// The unit's text with its executables in this build's folder (so `verify` checks real files).
    static func unit(_ name: String) throws -> String {
        let text = try String(contentsOf: root.appendingPathComponent("deploy/systemd/\(name)"), encoding: .utf8)
        return text.replacingOccurrences(of: "/usr/local/bin/", with: binaries.path + "/")
    }

    @Test(arguments: services)
    func unitVerifiesAndScoresOKOrBetter(_ name: String) throws {
        let folder = try TestFolder()
        let path = folder.path(name)
        try Data(try Self.unit(name).utf8).write(to: URL(fileURLWithPath: path))
        let verify = try Self.run("/usr/bin/systemd-analyze", ["verify", path])
        #expect(verify.status == 0 && verify.output.isEmpty, "systemd-analyze verify: \(verify.output)")

        let security = try Self.run("/usr/bin/systemd-analyze", ["security", "--offline=yes", path])
        let overall = try #require(security.output.split(separator: "\n").last { $0.contains("Overall exposure level") })
        let score = try #require(overall.firstMatch(of: #/: (\d+\.\d) (\w+)/#), "\(overall)")
        #expect(Double(score.1).map { $0 <= 2.0 } == true && ["OK", "SAFE"].contains(String(score.2)), "\(overall)")
        // The hardening the issue names, each present (a oneshot neither restarts nor notifies).
        let text = try Self.unit(name)
        let server = Self.units.contains(name) ? ["Restart=on-failure", "Type=notify"] : ["Type=oneshot"]
        for setting in [
            "DynamicUser=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes", "NoNewPrivileges=yes",
            "RestrictAddressFamilies=", "SystemCallFilter=@system-service", "CapabilityBoundingSet=\n",
        ] + server {
            #expect(text.contains(setting), "\(name) lacks \(setting)")
        }
    }

    /// A timer verifies with the service it starts beside it.
    @Test(arguments: timers)
    func timerVerifies(_ name: String) throws {
        let folder = try TestFolder()
        let service = name.replacingOccurrences(of: ".timer", with: ".service")
        for file in [name, service] {
            try Data(try Self.unit(file).utf8).write(to: URL(fileURLWithPath: folder.path(file)))
        }
        let verify = try Self.run("/usr/bin/systemd-analyze", ["verify", folder.path(name), folder.path(service)])
        #expect(verify.status == 0 && verify.output.isEmpty, "systemd-analyze verify: \(verify.output)")
        #expect(try Self.unit(name).contains("OnCalendar="))
    }

    /// The units' own `ExecStart` lines, with systemd's directories made real and a free port, start the real
    /// executables: READY=1 once they listen, RELOADING=1 … READY=1 around `ExecReload`'s SIGHUP, a new access
    /// log after logrotate's SIGUSR1, STOPPING=1 and exit 0 on SIGTERM (a second one cuts the drain delay).
    @Test(arguments: units)
    func unitCommandLineStartsAndSpeaksTheNotifyProtocol(_ name: String) throws {
        let folder = try TestFolder()
        let state = folder.path("state"), logs = folder.path("logs"), package = folder.path("public")
        for path in [state, logs, package + "/assets"] {
            // As systemd makes them: StateDirectoryMode=0700 (pulse-server refuses a state folder others can read).
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        try Data(#"{"format":"pulse-public/1","packageId":"0123456789abcdef0123456789abcdef","appconfig":{},"history":{}}"#.utf8)
            .write(to: URL(fileURLWithPath: package + "/index.json"))
        var arguments = try Self.execStart(try Self.unit(name)).map {
            $0.replacingOccurrences(of: "${STATE_DIRECTORY}", with: state).replacingOccurrences(of: "${LOGS_DIRECTORY}", with: logs)
                .replacingOccurrences(of: "/srv/pulse/public", with: package)
        }
        let listen = try #require(arguments.firstIndex(of: "--listen"))
        arguments[listen + 1] = "127.0.0.1:0"

        let socket = try NotifySocket()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.filter { $0.key != "PULSE_DATABASE_URL" }.merging(socket.environment) { $1 }
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

        let ready = try #require(socket.wait(for: "READY=1"), "\(name): no READY=1")
        let status = try #require(ready.first { $0.hasPrefix("STATUS=") })
        let port = try #require(status.firstMatch(of: #/http://127\.0\.0\.1:(\d+)/#).flatMap { Int($0.1) }, "\(status)")
        let client = { try RawHTTPConnection(host: "127.0.0.1", port: port, timeout: 5) }
        #expect(try client().request("GET", "/readyz").status == 200)

        kill(process.processIdentifier, SIGHUP)
        #expect(socket.wait(for: "RELOADING=1") != nil)
        #expect(socket.wait(for: "READY=1") != nil)

        let log = logs + "/access.log"
        #expect(rename(log, log + ".1") == 0, "the access log is at the unit's path")
        kill(process.processIdentifier, SIGUSR1)
        #expect(eventually(within: 5) { FileManager.default.fileExists(atPath: log) }, "SIGUSR1 opened a new access log")
        // The new file exists a moment before the server writes to it (open, then dup2 onto the log's fd): a
        // line in that moment rightly lands in the old one, so ask again until a line is in the new file.
        #expect(eventually(within: 5) {
            _ = try? client().request("GET", "/livez")
            return (try? String(contentsOfFile: log, encoding: .utf8))?.contains("/livez") == true
        })

        kill(process.processIdentifier, SIGTERM)
        #expect(socket.wait(for: "STOPPING=1") != nil)
        #expect(try client().request("GET", "/readyz").status == 503, "draining for the unit's --drain-delay")
        kill(process.processIdentifier, SIGTERM)
        #expect(eventually(within: 10) { !process.isRunning })
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    /// A trap restarts at once: under the unit's environment (`SWIFT_BACKTRACE=enable=no`) the Swift runtime installs
    /// no crash handler, so a runtime trap (SIGILL; SIGSEGV, SIGBUS, SIGFPE, SIGTRAP, SIGABRT for the rest) takes the
    /// signal's default action at once, for `Restart=on-failure` to start the process again. With the default, the
    /// runtime catches all six: a trap first suspends every thread while `swift-backtrace` symbolicates. (A signal
    /// sent with kill is not a trap: a caught one returns to the program once the backtrace is written, so the
    /// handlers are read from /proc, then SIGILL sent, which kills only a process without one.)
    @Test(arguments: units)
    func aTrapEndsTheProcessAtOnceUnderTheUnitsEnvironment(_ name: String) throws {
        let unit = try Self.unit(name)
        let environment = Self.environment(unit)
        #expect(environment["SWIFT_BACKTRACE"] == "enable=no", "\(name): \(environment)")
        let folder = try TestFolder()
        let state = folder.path("state"), logs = folder.path("logs"), package = folder.path("public")
        for path in [state, logs, package + "/assets"] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        try Data(#"{"format":"pulse-public/1","packageId":"0123456789abcdef0123456789abcdef","appconfig":{},"history":{}}"#.utf8)
            .write(to: URL(fileURLWithPath: package + "/index.json"))
        var arguments = try Self.execStart(unit).map {
            $0.replacingOccurrences(of: "${STATE_DIRECTORY}", with: state).replacingOccurrences(of: "${LOGS_DIRECTORY}", with: logs)
                .replacingOccurrences(of: "/srv/pulse/public", with: package)
        }
        let listen = try #require(arguments.firstIndex(of: "--listen"))
        arguments[listen + 1] = "127.0.0.1:0"
        let socket = try NotifySocket()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.filter { $0.key != "PULSE_DATABASE_URL" && $0.key != "SWIFT_BACKTRACE" }
            .merging(socket.environment) { $1 }.merging(environment) { $1 }
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(socket.wait(for: "READY=1") != nil, "\(name): no READY=1")

        let caught = try Self.caughtSignals(process.processIdentifier)
        let traps = [SIGILL, SIGSEGV, SIGBUS, SIGFPE, SIGTRAP, SIGABRT]
        #expect(caught.isDisjoint(with: traps), "\(name): a crash handler for signals \(caught.intersection(traps).sorted())")
        guard !caught.contains(SIGILL) else { return }
        let sent = Date()
        kill(process.processIdentifier, SIGILL)
        #expect(eventually(within: 5) { !process.isRunning }, "\(name): alive after SIGILL")
        #expect(Date().timeIntervalSince(sent) < 1, "\(name): \(Date().timeIntervalSince(sent)) s from SIGILL to the exit")
        if !process.isRunning {
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGILL, "\(name): \(process.terminationStatus)")
        }
    }

    /// The signals `pid` has a handler for (`SigCgt` of /proc/PID/status).
    static func caughtSignals(_ pid: Int32) throws -> Set<Int32> {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigCgt:") })
        let mask = try #require(UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16))
        return Set((1...64).filter { mask & (1 << UInt64($0 - 1)) != 0 }.map(Int32.init))
    }

    /// The unit's `Environment=` assignments (one each, unquoted, as the units write them).
    static func environment(_ unit: String) -> [String: String] {
        var out: [String: String] = [:]
        for line in unit.split(separator: "\n") where line.hasPrefix("Environment=") {
            let assignment = line.dropFirst("Environment=".count)
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            out[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        return out
    }

    @Test func logrotateSnippetParses() throws {
        let folder = try TestFolder()
        let result = try Self.run("/usr/sbin/logrotate", ["-d", "-s", folder.path("state"), Self.root.appendingPathComponent("deploy/logrotate/pulse").path])
        #expect(result.status == 0, "\(result.output)")
        #expect(!result.output.lowercased().contains("error"), "\(result.output)")
        #expect(result.output.contains("/var/log/pulse-server/access.log") && result.output.contains("/var/log/pulse-origin/access.log"))
    }

    /// `ExecStart=`'s words: continuation lines joined, split at spaces (the units quote nothing).
    static func execStart(_ unit: String) throws -> [String] {
        let joined = unit.replacingOccurrences(of: "\\\n", with: " ")
        let line = try #require(joined.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        return line.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
