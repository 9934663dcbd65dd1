import Foundation
import PulseSystem

/// The standard `process_*` metrics of Prometheus' client libraries, read from `/proc/self` when
/// scraped (Linux; elsewhere, or if a file cannot be read, the metric reads NaN in that scrape). Nothing
/// outside `/proc/self` is read, so all of them work under systemd's `ProcSubset=pid`.
struct ProcessMetrics {
    /// USER_HZ, the unit of the times in `/proc/<pid>/stat`: 100 on every Linux architecture Swift runs
    /// on (the kernel converts to it for user space). Prometheus' procfs library fixes it the same way
    /// rather than calling sysconf(_SC_CLK_TCK); the tests compare it with `getconf CLK_TCK`.
    static let ticksPerSecond = 100.0

    /// The fields of `/proc/self/stat` after the command name, which is in parentheses and may itself
    /// hold spaces and parentheses: split after its last `)`. Field 3 (state) is `fields[0]`.
    static func statFields(_ text: String) -> [Substring]? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        return fields.count >= 22 ? fields : nil
    }

    static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    static func stat() -> String? { read("/proc/self/stat") }

    /// utime + stime (fields 14 and 15), in seconds.
    static func cpuSeconds(stat: String) -> Double? {
        guard let fields = statFields(stat), let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        return Double(user + system) / ticksPerSecond
    }

    /// vsize (field 23), in bytes.
    static func virtualMemoryBytes(stat: String) -> Double? {
        guard let fields = statFields(stat), let bytes = UInt64(fields[20]) else { return nil }
        return Double(bytes)
    }

    /// Start time: field 22 (ticks after boot, CLOCK_BOOTTIME) plus when the machine booted
    /// (`SystemClock.bootWallClockSeconds()`), in seconds since the epoch. Not `btime` of `/proc/stat`, as
    /// Prometheus' procfs reads it: the shipped units' `ProcSubset=pid` hides `/proc/stat`, which left this
    /// metric NaN; `/proc/self/stat` stays visible.
    static func startTimeSeconds(stat: String, bootedAt: Double) -> Double? {
        guard let fields = statFields(stat), let ticks = UInt64(fields[19]) else { return nil }
        return bootedAt + Double(ticks) / ticksPerSecond
    }

    /// `VmRSS:` of `/proc/self/status` (kB), in bytes.
    static func residentMemoryBytes(status: String) -> Double? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
        let parts = line.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, parts[2] == "kB", let kilobytes = UInt64(parts[1]) else { return nil }
        return Double(kilobytes) * 1024
    }

    /// The soft limit of "Max open files" in `/proc/self/limits` (`+Inf` when unlimited).
    static func maxFileDescriptors(limits: String) -> Double? {
        guard let line = limits.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") }) else { return nil }
        let parts = line.dropFirst("Max open files".count).split(separator: " ", omittingEmptySubsequences: true)
        guard let soft = parts.first else { return nil }
        if soft == "unlimited" { return .infinity }
        return UInt64(soft).map { Double($0) }
    }

    /// The entries of `/proc/self/fd`, less the one the listing itself holds open.
    static func openFileDescriptors() -> Double? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"), !entries.isEmpty else { return nil }
        return Double(entries.count - 1)
    }
}

extension MetricsRegistry {
    /// Adds `process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_virtual_memory_bytes`,
    /// `process_open_fds`, `process_max_fds` and `process_start_time_seconds`, with the help texts of
    /// Prometheus' client libraries, so dashboards made for them work unchanged. Each is read from
    /// `/proc/self` when scraped; nothing runs between scrapes.
    public func registerProcessMetrics() {
        counter("process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.") {
            ProcessMetrics.stat().flatMap(ProcessMetrics.cpuSeconds) ?? .nan
        }
        gauge("process_resident_memory_bytes", help: "Resident memory size in bytes.") {
            ProcessMetrics.read("/proc/self/status").flatMap(ProcessMetrics.residentMemoryBytes) ?? .nan
        }
        gauge("process_virtual_memory_bytes", help: "Virtual memory size in bytes.") {
            ProcessMetrics.stat().flatMap(ProcessMetrics.virtualMemoryBytes) ?? .nan
        }
        gauge("process_open_fds", help: "Number of open file descriptors.") { ProcessMetrics.openFileDescriptors() ?? .nan }
        gauge("process_max_fds", help: "Maximum number of open file descriptors.") {
            ProcessMetrics.read("/proc/self/limits").flatMap(ProcessMetrics.maxFileDescriptors) ?? .nan
        }
        gauge("process_start_time_seconds", help: "Start time of the process since unix epoch in seconds.") {
            ProcessMetrics.stat().flatMap { ProcessMetrics.startTimeSeconds(stat: $0, bootedAt: SystemClock.bootWallClockSeconds()) } ?? .nan
        }
    }

    /// Adds `pulse_build_info{version="…"} 1`, the version a dashboard shows and alerts on after an upgrade.
    public func registerBuildInfo(version: String) {
        let help = "The version of the running build; always 1."
        Naming.check("pulse_build_info", help: help, kind: .gauge, labels: ["version"], series: 1)
        let labels = Exposition.labelText(names: ["version"], values: [version])
        add(
            ReadingExposure(
                name: "pulse_build_info", help: help, kind: .gauge, labelText: [labels], read: { [1] }),
            claiming: ["pulse_build_info"])
    }
}
