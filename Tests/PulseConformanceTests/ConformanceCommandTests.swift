import Foundation
import PulseCommandLine
import PulseConformance
import PulseConformanceCLI
import PulseCore
import PulseDevice
import Synchronization
import SyncTestSupport
import Testing

@Suite struct ConformanceCommandTests {
    func run(_ arguments: [String]) -> (code: Int32, out: [String], err: [String]) {
        let out = Mutex<[String]>([]), err = Mutex<[String]>([])
        let console = Console(out: { line in out.withLock { $0.append(line) } }, err: { line in err.withLock { $0.append(line) } })
        let code = ConformanceCommand.main(arguments, console: console)
        return (code, out.withLock { $0 }, err.withLock { $0 })
    }

    @Test func usageMistakes() {
        let unknown = run(["--server", "http://127.0.0.1:1", "--staff-token", "x", "--only", "sign.windwo"])
        #expect(unknown.code == 64 && unknown.err.first == "pulse-conformance: error: no rule sign.windwo; did you mean \"sign.window\"?")
        let nothing = run(["--server", "http://127.0.0.1:1"])
        #expect(nothing.code == 64 && nothing.err.first?.contains("--staff-token") == true)
        let list = run(["--list"])
        #expect(list.code == 0 && list.out.count == RuleCatalog.all.count)
        let down = run(["--server", "http://127.0.0.1:1", "--staff-token", "x"])
        #expect(down.code == 1 && down.err.count == 1 && down.err[0].contains("does not answer"))
    }

    @Test func aFailingRuleMakesExitOneAndTheJSONNamesIt() throws {
        let harness = try ConformanceHarness(configure: { $0.signatureWindow = 3600 })
        let result = run(["--server", harness.server.url.absoluteString, "--staff-token", try harness.server.staffToken(), "--only", "sign.window,time.display", "--json"])
        #expect(result.code == 1)
        let report = try PulseCore.JSONValue.parse(Array(result.out.joined(separator: "\n").utf8))
        #expect(report["failed"] == ["sign.window"] && report["passed"] == 1)
    }
}
