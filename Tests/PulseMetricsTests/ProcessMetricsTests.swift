import Foundation
import PulseMetrics
import Testing

@Suite struct ProcessMetricsTests {
    /// The value of `name` in `registry`'s exposition.
    static func value(_ name: String, in registry: MetricsRegistry) -> Double? {
        for line in String(decoding: registry.exposition(), as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, parts[0] == name { return Double(parts[1]) ?? (parts[1] == "+Inf" ? .infinity : nil) }
        }
        return nil
    }

    /// What a shell command prints, trimmed.
    static func shell(_ command: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func clockTicksAreWhatTheParserAssumes() throws {
        #expect(try Self.shell("getconf CLK_TCK") == "100")
    }

    /// In a child process of its own (an exit test), so no other test opens files meanwhile.
    @Test func valuesAgreeWithWhatTheSystemSays() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let metrics = MetricsRegistry()
            metrics.registerProcessMetrics()
            let pid = ProcessInfo.processInfo.processIdentifier

            // Open descriptors: what fcntl finds open (counted without opening anything), before and after
            // ten more opens. Before any child process (Foundation's Process keeps descriptors of its own),
            // and read until two readings agree, as the test runtime may open one meanwhile.
            func reading() -> (ours: Double?, fcntl: Double) {
                var pair: (ours: Double?, fcntl: Double) = (nil, 0)
                for _ in 0..<10 {
                    pair = (Self.value("process_open_fds", in: metrics), Double((0..<Int32(65_536)).filter { fcntl($0, F_GETFD) != -1 }.count))
                    if pair.ours == pair.fcntl, pair.ours == Self.value("process_open_fds", in: metrics) { break }
                }
                return pair
            }
            let before = reading()
            let files = (0..<10).compactMap { _ in FileHandle(forReadingAtPath: "/dev/null") }
            let after = reading()
            withExtendedLifetime(files) {}
            print("fds", before, after)
            #expect(before.ours == before.fcntl && after.ours == after.fcntl)
            #expect((after.ours ?? 0) - (before.ours ?? 0) >= 10)

            // The soft limit, as the shell (which inherits it) reports it.
            let limit = try Self.shell("ulimit -n")
            #expect(Self.value("process_max_fds", in: metrics) == (limit == "unlimited" ? .infinity : Double(limit)))

            // CPU: spin until getrusage says 0.3 s more CPU time went by; the counter moves by as much (its
            // ticks are 10 ms).
            func rusageSeconds() -> Double {
                var usage = rusage()
                getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
                return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
            }
            let cpuBefore = Self.value("process_cpu_seconds_total", in: metrics) ?? -1, usageBefore = rusageSeconds()
            var spin: UInt64 = 0
            while rusageSeconds() - usageBefore < 0.3 { spin &+= 1 }
            withExtendedLifetime(spin) {}
            let moved = (Self.value("process_cpu_seconds_total", in: metrics) ?? -1) - cpuBefore, used = rusageSeconds() - usageBefore
            print("cpu", cpuBefore, moved, used)
            #expect(cpuBefore >= 0 && abs(moved - used) < 0.05, "cpu moved \(moved), getrusage \(used)")

            // Start time: now less the elapsed seconds ps reports, to within two seconds.
            let elapsed = Double(try Self.shell("ps -o etimes= -p \(pid)")) ?? -1
            let started = Self.value("process_start_time_seconds", in: metrics) ?? 0
            print("start", started, elapsed, Date().timeIntervalSince1970)
            #expect(abs(Date().timeIntervalSince1970 - elapsed - started) < 2.5, "start \(started), ps elapsed \(elapsed)")

            // Memory: resident as ps reports it (kB), within 10%; virtual at least resident.
            let rss = (Double(try Self.shell("ps -o rss= -p \(pid)")) ?? 0) * 1024
            let resident = Self.value("process_resident_memory_bytes", in: metrics) ?? 0
            print("rss", rss, resident)
            #expect(rss > 0 && abs(resident - rss) < rss * 0.1, "resident \(resident), ps \(rss)")
            #expect((Self.value("process_virtual_memory_bytes", in: metrics) ?? 0) >= resident)
            print(String(decoding: metrics.exposition(), as: UTF8.self))
        }
        // The child's issues come back without their values: what it printed, for the log.
        print(String(decoding: result?.standardOutputContent ?? [], as: UTF8.self))
    }
}
