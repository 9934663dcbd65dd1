import Foundation
@testable import PulseCommandLine
import PulseTestSupport
import Testing
@testable import PulseOrigin
@testable import PulseOriginCLI

@Suite struct OriginCommandTests {
    @Test func usageErrorsExit64() {
        #expect(OriginCommand.main([]) == ExitCode.usage)  // no --package
        #expect(OriginCommand.main(["--package", "/tmp", "--memory-cache", "lots"]) == ExitCode.usage)
        #expect(OriginCommand.main(["--package", "/tmp", "--threads", "0"]) == ExitCode.usage)
        #expect(OriginCommand.main(["--package", "/tmp", "--connection-memory", "1K"]) == ExitCode.usage)
        #expect(OriginCommand.main(["--package", "/tmp", "--bogus"]) == ExitCode.usage)
    }

    @Test func missingOrInvalidPackageExits1() throws {
        #expect(OriginCommand.main(["--package", "/nonexistent/\(UUID().uuidString)"]) == ExitCode.failure)
        let notAPackage = try TestFolder()
        #expect(OriginCommand.main(["--package", notAPackage.url.path]) == ExitCode.failure)
    }

    @Test func settingsAndSizes() throws {
        let arguments = try #require(try CommandLineTool.parse([
            "--package", "/p", "--listen", "0.0.0.0:9000", "--memory-cache", "64M", "--memory-max-blob", "512KiB",
            "--allow-origin", "off", "--max-connections-per-ip", "0", "--idle-timeout", "5",
            "--drain-delay", "7",
        ], for: OriginCommand.command))
        let (origin, server, log, drainDelay, drain) = try OriginCommand.settings(arguments)
        #expect(origin.memoryBudget == 64_000_000)  // SI, as every Pulse tool reads sizes (ByteCount)
        #expect(origin.memoryMaxBlob == 512 << 10)
        #expect(origin.allowOrigin == nil)
        #expect(server.listen == "0.0.0.0:9000")
        #expect(server.maxConnectionsPerIP == 0)
        #expect(server.idleTimeoutSeconds == 5)
        #expect(server.requestHeaders == Origin.requestHeaders)
        #expect(log == "-")
        #expect(drainDelay == 7)
        #expect(drain == 10)
        let defaults = try #require(try CommandLineTool.parse(["--package", "/p"], for: OriginCommand.command))
        #expect(try OriginCommand.settings(defaults).drainDelay == 0)
        #expect(OriginCommand.main(["--package", "/p", "--drain-delay", "3601"]) == ExitCode.usage)
    }
}
