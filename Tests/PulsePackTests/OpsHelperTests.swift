import Foundation
import Testing

@testable import PulsePack

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
        #expect(usage.err.first == "pulse-pack push: missing <package>")
    }

    @Test func aMissingHelperIsOneClearLine() throws {
        let folder = try Support.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let lonely = folder.appendingPathComponent("pulse-pack")
        try FileManager.default.copyItem(at: Support.binary, to: lonely)
        let process = Process()
        process.executableURL = lonely
        process.arguments = ["push", folder.path, "--to", folder.appendingPathComponent("cdn").path]
        let err = Pipe()
        process.standardError = err
        try process.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(text.split(separator: "\n").count == 1)
        #expect(text.hasPrefix("pulse-pack: error: cannot run \(folder.appendingPathComponent("pulse-pack-ops").path) (No such file or directory)"))
    }

    @Test func pulsePackDoesNotLinkTheNetworkingStack() throws {
        let ldd = Process()
        ldd.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
        ldd.arguments = [Support.binary.path]
        let out = Pipe()
        ldd.standardOutput = out
        try ldd.run()
        let libraries = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ldd.waitUntilExit()
        #expect(libraries.contains("libqpdf"))
        #expect(!libraries.contains("libcurl"))
        #expect(!libraries.contains("FoundationNetworking"))
    }
}
