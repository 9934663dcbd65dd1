import Foundation
import PulseTestSupport
import Testing

@testable import PulsePack
@testable import PulsePackCLI

/// `pulse-pack push|gc` hand over to `pulse-pack-ops`, so that pulse-pack itself never loads libcurl.
@Suite struct OpsHelperTests {
    @Test func whichArgumentsGoToTheHelper() {
        #expect(OpsCommands.forwarded(["push", "pkg", "--to", "cdn"]) == ["push", "pkg", "--to", "cdn"])
        #expect(OpsCommands.forwarded(["gc", "s3://b/p", "--dry-run"]) == ["gc", "s3://b/p", "--dry-run"])
        #expect(OpsCommands.forwarded(["help", "push"]) == ["push", "--help"])
        #expect(OpsCommands.forwarded(["build", "push"]) == nil)
        #expect(OpsCommands.forwarded(["help"]) == nil)
        #expect(OpsCommands.forwarded([]) == nil)
    }

    @Test func helpAndUsageComeFromTheHelperUnderPulsePacksName() throws {
        let top = try Support.executable(["--help"])
        #expect(top.code == 0)
        #expect(top.out.contains { $0.hasPrefix("  push ") })
        #expect(top.out.contains { $0.hasPrefix("  gc ") })
        let push = try Support.executable(["push", "--help"])
        #expect(push.code == 0)
        #expect(push.out.contains("USAGE: pulse-pack push [options] <package>"))
        #expect(push.out.contains { $0.contains("--to <target>") })
        let gc = try Support.executable(["help", "gc"])
        #expect(gc.code == 0)
        #expect(gc.out.contains { $0.contains("--keep <n>") })
        let usage = try Support.executable(["push"])
        #expect(usage.code == 64)
        #expect(usage.err.first == "pulse-pack: error: push: missing <package>")
    }

    @Test func aMissingHelperIsOneClearLine() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let lonely = folder.appendingPathComponent("pulse-pack")
        try FileManager.default.copyItem(at: Support.binary, to: lonely)
        let result = try Support.executable(["push", folder.path, "--to", folder.appendingPathComponent("cdn").path], program: lonely)
        #expect(result.code == 1)
        #expect(result.err.count == 1)
        #expect(result.err.first?.hasPrefix("pulse-pack: error: cannot run \(folder.appendingPathComponent("pulse-pack-ops").path) (No such file or directory)") == true)
    }

    @Test func pulsePackDoesNotLinkTheNetworkingStack() throws {
        let ldd = try Support.executable([Support.binary.path], program: URL(fileURLWithPath: "/usr/bin/ldd"))
        #expect(ldd.code == 0)
        let libraries = ldd.out.joined(separator: "\n")
        #expect(libraries.contains("libqpdf"))
        #expect(!libraries.contains("libcurl"))
        #expect(!libraries.contains("FoundationNetworking"))
    }
}
