import Foundation
import PulseCore
import PulseServer
import PulseServerStorage
import PulseTestSupport
import SyncTestSupport
import Synchronization
import Testing
@testable import PulseDevice
@testable import PulseDeviceCLI
import PulseCommandLine

/// `pulse-device` as a user runs it: exit codes, one line per error, JSON, the only plaintext where --out says.
@Suite struct DeviceCommandTests {
    final class Captured: @unchecked Sendable {
        private let lock = NSLock()
        private var outLines: [String] = []
        private var errLines: [String] = []
        var console: Console {
            Console(out: { line in self.lock.withLock { self.outLines.append(line) } }, err: { line in self.lock.withLock { self.errLines.append(line) } })
        }
        var lines: [String] { lock.withLock { outLines } }
        var lastOut: String { lines.last ?? "" }
        var errors: [String] { lock.withLock { errLines } }
    }

    func run(_ arguments: [String]) -> (code: Int32, output: Captured) {
        let captured = Captured()
        return (DeviceCommand.main(arguments, console: captured.console), captured)
    }

    @Test func usageAndFolderMistakesAreOneLineWithTheirExitCodes() throws {
        let temporary = try TestFolder()
        let noFolder = run(["keys", "--session", "a"])
        #expect(noFolder.code == 64 && noFolder.output.errors.first == "pulse-device: error: keys: missing --device-dir <dir> (or set PULSE_DEVICE_DIR)")
        let empty = try DeviceFolder.open(temporary.path("empty"), create: true)
        let notEnrolled = run(["keys", "--device-dir", empty.path, "--session", "a"])
        #expect(notEnrolled.code == 65 && notEnrolled.output.errors.count == 1 && notEnrolled.output.errors[0].contains("holds no enrolled device"))
        let badURL = run(["enroll", "--server", "ftp://x", "--token", "t", "--device-dir", temporary.path("new")])
        #expect(badURL.code == 65 && badURL.output.errors[0].contains("give a base URL"))
    }

    @Test func enrollSyncKeysAndOpenThroughTheCommandLine() throws {
        let work = try TestFolder()
        let package = try SamplePackage.build(in: work.url)
        let server = try TestSyncServer(package: package)
        let temporary = try TestFolder()
        let dir = temporary.path("phone")
        let enrolled = run(["enroll", "--server", server.url.absoluteString, "--token", try server.deviceCode(.session("keynote")), "--device-dir", dir, "--json"])
        #expect(enrolled.code == 0, "\(enrolled.output.errors)")
        #expect((try JSONValue.parse(Array(enrolled.output.lastOut.utf8)))["scope"]?["id"]?.stringValue == "keynote")
        let synced = run(["sync", "--device-dir", dir, "--json"])
        #expect(synced.code == 0, "\(synced.output.errors)")
        #expect((try JSONValue.parse(Array(synced.output.lastOut.utf8)))["blobsFetched"]?.intValue == 17)
        let both = run(["sync", "--device-dir", dir, "--session", "a", "--series", "b"])
        #expect(both.code == 64 && both.output.errors.first == "pulse-device: error: sync: give --session or --series, not both")
        let text = run(["sync", "--device-dir", dir])
        #expect(text.code == 0 && text.output.lastOut.hasPrefix("sync: 2 requests, "), "\(text.output.lines)")

        try server.set("keynote", SessionUpdate(state: .live))
        try server.advance("keynote", to: 1)
        let keys = run(["keys", "--device-dir", dir, "--json"])
        let released = try JSONValue.parse(Array(keys.output.lastOut.utf8))["released"]
        #expect(keys.code == 0 && released == [0, 1])
        let out = temporary.path("slide1.pdf")
        let opened = run(["open", "--device-dir", dir, "--slide", "1", "--out", out])
        #expect(opened.code == 0 && opened.output.lastOut.contains("PDF written to"))
        #expect(((try FileManager.default.attributesOfItem(atPath: out))[.posixPermissions] as? Int) == 0o600)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)).prefix(4) == Data("%PDF".utf8))
        let refused = run(["open", "--device-dir", dir, "--slide", "2", "--out", temporary.path("slide2.pdf")])
        #expect(refused.code == 1 && refused.output.errors == ["pulse-device: error: slide 2 of session keynote is not released (the server released slides 0–1 of deckVersion 1)"])
        #expect(!FileManager.default.fileExists(atPath: temporary.path("slide2.pdf")))
        let skewed = run(["keys", "--device-dir", dir, "--clock-skew", "-600"])
        #expect(skewed.code == 0, "a clock ten minutes slow recovers: \(skewed.output.errors)")
        let verified = run(["status", "--device-dir", dir, "--verify"])
        #expect(verified.code == 0 && verified.output.lastOut.contains("verified"))
        #expect(verified.output.lines.contains { $0.hasPrefix("  signed answers required: 1 trusted answer key, ") }, "\(verified.output.lines)")
        let status = run(["status", "--device-dir", dir, "--json"])
        let answers = try JSONValue.parse(Array(status.output.lastOut.utf8))["answers"]
        #expect(answers?["signs"] == .bool(true) && answers?["trustedKeys"]?.arrayValue?.count == 1 && (answers?["recorded"]?.intValue ?? 0) >= 2)
    }
}
