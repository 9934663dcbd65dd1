import Foundation
import PulseTestSupport
import Testing

/// Both shipped units run the servers with `ProcSubset=pid` and `ProtectProc=invisible`: a `/proc` with only
/// the processes' own folders, no `/proc/stat`. The servers run here the same way (a mount namespace of their
/// own with such a `/proc`, as systemd sets it up), and every `process_*` metric still has a value; the start
/// time was NaN there while it was read from `/proc/stat`'s `btime`.
@Suite(.serialized) struct MetricsProcSubsetTests {
    static let isRoot = geteuid() == 0

    /// `unshare` a mount namespace, mount a `/proc` with `subset=pid,hidepid=invisible`, exec the server.
    static let launcher = [
        "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
        #"mount -t proc -o subset=pid,hidepid=invisible proc /proc && exec "$0" "$@""#,
    ]

    @Test(.enabled(if: isRoot, "needs root to mount a /proc of its own"))
    func processMetricsHaveValuesUnderProcSubsetPid() throws {
        let folder = try TestFolder()
        let (data, package, _) = try MetricsServeTests.event(in: folder)
        for (tool, arguments) in [("pulse-server", ["serve", "--data", data, "--access-log", "off"]), ("pulse-origin", ["--package", package.path, "--access-log", "off"])] {
            let server = try MetricsProcess(tool, arguments, launcher: Self.launcher)
            // It runs as the units run it: /proc holds no stat file.
            let mounts = try String(contentsOfFile: "/proc/\(server.process.processIdentifier)/mountinfo", encoding: .utf8)
            #expect(mounts.split(separator: "\n").contains { $0.contains(" /proc ") && $0.contains("subset=pid") }, "\(tool): \(mounts)")

            let text = String(decoding: try server.scrape().body, as: UTF8.self)
            let now = Date().timeIntervalSince1970
            let started = try #require(Scrape.value(text, "process_start_time_seconds"), "\(tool): \(text)")
            #expect(started.isFinite && started <= now + 0.5 && started > now - 120, "\(tool): started \(started), now \(now)")
            for name in ["process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes", "process_open_fds", "process_max_fds"] {
                let value = try #require(Scrape.value(text, name), "\(tool): \(name) missing")
                #expect(!value.isNaN && value > 0 || name == "process_cpu_seconds_total" && value >= 0, "\(tool): \(name) \(value)")
            }
        }
    }
}
