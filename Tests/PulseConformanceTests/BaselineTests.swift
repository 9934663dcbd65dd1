import Foundation
import PulseConformance
import SyncTestSupport
import Testing

/// The suite passes against pulse-server: every rule with a staff token; without one, the rules that drive
/// the session are skipped and nothing fails.
@Suite struct BaselineTests {
    @Test func everyRulePassesAgainstPulseServer() throws {
        let harness = try ConformanceHarness()
        let results = try harness.run()
        #expect(results.count == RuleCatalog.all.count)
        #expect(results.failed.isEmpty && results.skipped.isEmpty, "\(results.report)")
    }

    @Test func withoutAStaffTokenTheStateRulesAreSkippedAndNothingFails() throws {
        let harness = try ConformanceHarness()
        let results = try harness.run(staff: false)
        #expect(results.failed.isEmpty, "\(results.report)")
        #expect(Set(results.skipped) == ["keys.gated-before-live", "keys.live-frontier", "keys.venue-lock", "keys.ended", "events.advance"], "\(results.report)")
    }

    @Test func aRefusedStaffTokenStopsTheRunWithOneLine() throws {
        let harness = try ConformanceHarness()
        var options = ConformanceOptions(server: harness.server.url)
        options.staffToken = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        #expect { try ConformanceRun(options: options).run() } throws: { "\($0)".contains("staff token was refused") }
    }
}
