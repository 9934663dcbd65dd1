import Foundation
import PulseSystem
import Testing
@testable import PulseMetrics

/// `process_start_time_seconds` without `/proc/stat`: the shipped units' `ProcSubset=pid` hides it, which
/// made the metric NaN (MetricsProcSubsetTests runs the servers that way).
@Suite struct StartTimeTests {
    /// Field 22 of `/proc/self/stat` in ticks of 10 ms, after a command name holding spaces and parentheses.
    @Test func theStartIsTheBootPlusTheStartTicks() throws {
        let stat = "4834 (a (b) c) R 4831 4829 569 0 -1 4194304 77 0 0 0 7 3 0 0 20 0 1 0 87510 2998272 413 18446744073709551615 1 1 0 0 0"
        #expect(ProcessMetrics.startTimeSeconds(stat: stat, bootedAt: 1_700_000_000.25) == 1_700_000_000.25 + 875.1)
        #expect(ProcessMetrics.cpuSeconds(stat: stat) == 0.1)
        #expect(ProcessMetrics.startTimeSeconds(stat: "4834 (short) R 1 2 3", bootedAt: 1) == nil)
        #expect(ProcessMetrics.startTimeSeconds(stat: stat.replacingOccurrences(of: " 87510 ", with: " -1 "), bootedAt: 1) == nil)
    }

    /// The boot time from the clocks is what `btime` of `/proc/stat` says (the kernel truncates it to a second).
    @Test func theClocksGiveTheBootTimeOfProcStat() throws {
        let text = try String(contentsOfFile: "/proc/stat", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("btime ") })
        let btime = try #require(Double(line.dropFirst(6)))
        let booted = SystemClock.bootWallClockSeconds()
        #expect(booted - btime >= -0.01 && booted - btime < 1.01, "clocks \(booted), btime \(btime)")
    }

    /// This process's start time is within a few seconds before now (the test runner started it).
    @Test func thisProcessStartedBeforeNow() throws {
        let registry = MetricsRegistry()
        registry.registerProcessMetrics()
        let started = try #require(ProcessMetricsTests.value("process_start_time_seconds", in: registry))
        let now = Date().timeIntervalSince1970
        #expect(started.isFinite && started <= now + 0.01 && started > now - 3600, "started \(started), now \(now)")
    }
}
