import PulseCommandLine
import Testing
@testable import PulseServerCLI

/// `serve --staff-change-rate N --staff-change-burst N`: the staff API's limit on a presenter's or moderator's
/// changes (`SyncConfiguration.staffChangeLimit`), which `Scripts/test-console` lowers to see the clicker wait.
@Suite struct StaffChangeOptionTests {
    @Test func theOptionsSetTheLimitAndTheDefaultsStay() throws {
        let command = ServeCommand.command(console: Console(out: { _ in }, err: { _ in }, environment: [:]))
        let given = try #require(try CommandLineTool.parse(["--data", "/d", "--staff-change-rate", "2", "--staff-change-burst", "7"], for: command))
        let limit = try ServeCommand.settings(given).sync.staffChangeLimit
        #expect(limit.rate == 2 && limit.burst == 7)
        let defaults = try ServeCommand.settings(try #require(try CommandLineTool.parse(["--data", "/d"], for: command))).sync.staffChangeLimit
        #expect(defaults.rate == 10 && defaults.burst == 60)
        #expect(CLI.run(["serve", "--help"]).text.contains("--staff-change-rate <per-second>"))
        #expect(CLI.run(["serve", "--data", "/tmp/pulse-no-such-folder", "--staff-change-burst", "0"]).code == 64)
    }
}
