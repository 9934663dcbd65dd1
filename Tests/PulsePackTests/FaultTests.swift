import Foundation
import PulseCore
import PulseStore
import PulseTestSupport
import Testing

@testable import PulsePack

/// Faults from outside: a full disk, a read-only folder, `kill -9` at any moment.
/// Mounting a small tmpfs needs root (CI runs as root).
@Suite(.serialized)
struct FaultTests {
    static let isRoot = getuid() == 0

    /// A tmpfs of `size` mounted on a fresh folder; unmounted by `done()`.
    struct Mount {
        let folder: TestFolder
        let path: URL
        init(size: String) throws {
            folder = try TestFolder("mount")
            path = folder.url
            let status = try Support.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path.path])
            try #require(status == 0, "mount tmpfs failed")
        }
        func remountReadOnly() throws {
            try #require(try Support.run("/bin/mount", ["-o", "remount,ro", path.path]) == 0)
        }
        func done() { _ = try? Support.run("/bin/umount", ["-l", path.path]) }
    }

    @Test(.enabled(if: isRoot, "needs root to mount a tmpfs")) func fullDiskLeavesPreviousPackage() throws {
        let mount = try Mount(size: "400k")
        defer { mount.done() }
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = mount.path.appendingPathComponent("pkg")
        try Support.build(try Support.sessionFile(in: folder, deck: Support.fixtures.appendingPathComponent("pdf/three-pages.pdf")), out: out)
        let before = Support.snapshot(out)
        // The 14-slide deck needs about 750 KB: the disk fills up half-way.
        let session = try Support.sessionFile(in: folder, deck: Support.keynotePDF)
        let result = Support.cli(["build", session.path, "--out", out.path])
        #expect(result.code == 1)
        #expect(result.err.count == 1 && result.err[0].contains("No space left on device"), "\(result.err)")
        #expect(Support.snapshot(out) == before)
        #expect(Verifier(package: out, keys: nil).run().problems.isEmpty)
    }

    @Test(.enabled(if: isRoot, "needs root to mount a tmpfs")) func readOnlyFolderLeavesPreviousPackage() throws {
        let mount = try Mount(size: "4m")
        defer { mount.done() }
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = mount.path.appendingPathComponent("pkg")
        try Support.build(try Support.sessionFile(in: folder, deck: Support.fixtures.appendingPathComponent("pdf/three-pages.pdf")), out: out)
        let before = Support.snapshot(out)
        try mount.remountReadOnly()
        let session = try Support.sessionFile(in: folder, deck: Support.keynotePDF)
        let result = Support.cli(["build", session.path, "--out", out.path])
        #expect(result.code == 1)
        #expect(result.err.count == 1 && result.err[0].contains("Read-only file system"), "\(result.err)")
        #expect(Support.snapshot(out) == before)
    }

    /// Kills real `pulse-pack build` processes at many moments; after each, the package is the previous
    /// one (or the finished new one), every blob matches its name, and the next build completes.
    @Test func killNineAtAnyMomentKeepsThePackageIntact() throws {
        let binary = Support.binary
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the pulse-pack executable first (swift build)")
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = folder.appendingPathComponent("pkg")
        let small = try Support.sessionFile(in: folder, deck: Support.fixtures.appendingPathComponent("pdf/three-pages.pdf"))
        try Support.build(small, out: out)
        let previousIndex = try Data(contentsOf: out.appendingPathComponent("server/index.json"))

        // A bigger deck so that a build takes a while: the sample images repeated, each made unique.
        let deck = folder.appendingPathComponent("big-deck")
        try FileManager.default.createDirectory(at: deck, withIntermediateDirectories: true)
        let sample = Array(try Data(contentsOf: Support.keynoteImages.appendingPathComponent("slide1.png")))
        for n in 1...150 {
            try Data(Support.pngWithText(sample, "slide \(n)")).write(to: deck.appendingPathComponent("slide\(n).png"))
        }
        let big = try Support.sessionFile(in: folder, deck: deck)

        var killedBeforeCommit = 0
        for delay in [0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2, 0.3] {
            let process = Process()
            process.executableURL = binary
            process.arguments = ["build", big.path, "--out", out.path, "--quiet"]
            process.environment = Support.environment  // the secret's home is the tests' own
            try process.run()
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let index = try Data(contentsOf: out.appendingPathComponent("server/index.json"))
            if index == previousIndex { killedBeforeCommit += 1 }
            let report = Verifier(package: out, keys: nil).run()
            #expect(report.problems.isEmpty, "after kill at \(delay) s: \(report.problems)")
            if index != previousIndex { break }  // the build got to commit: later kills test nothing new
        }
        #expect(killedBeforeCommit > 0, "at least one kill must land before the commit")
        let finished = try Support.build(big, out: out)
        #expect(finished.sessions[0].slides == 150)
        let report = Verifier(package: out, keys: nil).run()
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.slidesDecrypted == 150)
    }

    /// A PDF deck is mapped, not read: one rewritten in place while a build reads it (re-exported over the same
    /// file) would stop the process with SIGBUS. Truncated at many moments, every build either completes or
    /// ends with one line naming the file and exit status 1, never a signal, and the package stays whole.
    @Test func aDeckTruncatedWhileItIsReadGivesOneLineNotACrash() throws {
        let binary = Support.binary
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the pulse-pack executable first (swift build)")
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = folder.appendingPathComponent("pkg")
        let original = folder.appendingPathComponent("original.pdf")
        let script = Support.repository.appendingPathComponent("Scripts/samples/make-image-deck")
        try #require(try Support.run(script.path, ["--pages", "400", "--out", original.path]) == 0)
        let deck = folder.appendingPathComponent("deck.pdf")
        let session = try Support.sessionFile(in: folder, deck: deck)
        try FileManager.default.copyItem(at: original, to: deck)
        try Support.build(session, out: out)
        let previousIndex = try Data(contentsOf: out.appendingPathComponent("server/index.json"))

        var caught = 0
        for delay in [0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6, 0.8] {
            try? FileManager.default.removeItem(at: deck)
            try FileManager.default.copyItem(at: original, to: deck)
            // Another deck, so the build has something to write: the first page's text changes.
            let process = Process()
            process.executableURL = binary
            process.arguments = ["build", session.path, "--out", out.path, "--quiet"]
            process.environment = Support.environment
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            Thread.sleep(forTimeInterval: delay)
            #expect(truncate(deck.path, 100_000) == 0)
            let lines = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
            process.waitUntilExit()
            #expect(process.terminationReason == .exit, "after truncation at \(delay) s: killed by signal \(process.terminationStatus)")
            if process.terminationStatus != 0 {
                caught += 1
                #expect(process.terminationStatus == 1 || process.terminationStatus == 65, "at \(delay) s: exit \(process.terminationStatus)")
                #expect(lines.count == 1 && lines.first?.hasPrefix("pulse-pack: error: \(deck.path)") == true, "at \(delay) s: \(lines)")
                #expect(try Data(contentsOf: out.appendingPathComponent("server/index.json")) == previousIndex)
            }
            let report = Verifier(package: out, keys: nil).run()
            #expect(report.problems.isEmpty, "after truncation at \(delay) s: \(report.problems)")
        }
        #expect(caught > 0, "at least one truncation must land while the deck is being read")
    }
}

extension FaultTests {
    /// A package of `count` unique image slides (about 20 KB each).
    static func bigPackage(_ count: Int, in folder: URL) throws -> URL {
        let deck = folder.appendingPathComponent("big-deck")
        try FileManager.default.createDirectory(at: deck, withIntermediateDirectories: true)
        let sample = Array(try Data(contentsOf: Support.keynoteImages.appendingPathComponent("slide1.png")))
        for n in 1...count {
            try Data(Support.pngWithText(sample, "slide \(n)")).write(to: deck.appendingPathComponent("slide\(n).png"))
        }
        let out = folder.appendingPathComponent("pkg")
        try Support.build(try Support.sessionFile(in: folder, deck: deck), out: out)
        return out
    }

    /// Every blob list and file a target's index.json names is there, and every blob those lists name is
    /// there with the right bytes: what a phone or CDN may see at any moment.
    static func targetIsConsistent(_ target: URL) throws -> [String] {
        let published = PublicFolder(root: target)
        guard published.exists else { return [] }  // nothing published yet
        var problems: [String] = []
        for version in try published.readIndex().history.values.joined() {
            for file in version.files ?? [] where !FileManager.default.fileExists(atPath: target.appendingPathComponent(file).path) {
                problems.append("\(file) missing")
            }
            guard let list = try? published.readBlobList(version.refs) else {
                problems.append("blob list \(version.refs) missing or damaged")
                continue
            }
            for entry in list.entries where (try? published.assets.read((entry.assetHash, entry.bytes))) == nil {
                problems.append("blob \(entry.assetHash) missing or damaged")
            }
        }
        return problems
    }

    /// `pulse-pack push` to a folder, killed at many moments: the target never shows an index naming
    /// something it lacks, and a re-run finishes the job and then uploads nothing.
    @Test func killNineDuringPushNeverExposesAMissingBlob() throws {
        let binary = Support.binary
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the pulse-pack executable first (swift build)")
        let temporary = try TestFolder()
        let folder = temporary.url
        let package = try Self.bigPackage(200, in: folder)
        let target = folder.appendingPathComponent("cdn")
        var killedEarly = 0
        for delay in [0.01, 0.02, 0.04, 0.06, 0.1, 0.15, 0.25] {
            let process = Process()
            process.executableURL = binary
            process.arguments = ["push", package.path, "--to", target.path, "--json"]
            process.environment = Support.environment
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(try Self.targetIsConsistent(target).isEmpty, "after kill at \(delay) s")
            if !FileManager.default.fileExists(atPath: target.appendingPathComponent("index.json").path) { killedEarly += 1 }
        }
        #expect(killedEarly > 0, "at least one kill must land before the index is published")
        #expect(try Support.executable(["push", package.path, "--to", target.path]).code == 0)
        #expect(try Self.targetIsConsistent(target).isEmpty)
        let again = try Support.executable(["push", package.path, "--to", target.path, "--json"])
        #expect(again.code == 0)
        let report = try JSONValue.parse(Data(again.out.joined(separator: "\n").utf8))
        #expect(report["uploaded"] == 0)
    }

    @Test(.enabled(if: isRoot, "needs root to mount a tmpfs")) func pushToAFullFolderPublishesNothing() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let package = try Self.bigPackage(40, in: folder)  // about 900 KB of blobs
        let mount = try Mount(size: "300k")
        defer { mount.done() }
        let target = mount.path.appendingPathComponent("cdn")
        let result = try Support.executable(["push", package.path, "--to", target.path])
        #expect(result.code == 1)
        #expect(!FileManager.default.fileExists(atPath: target.appendingPathComponent("index.json").path))
        #expect(try Self.targetIsConsistent(target).isEmpty)
    }
}

extension Support {
    /// The `pulse-pack` executable built next to the test bundle.
    static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pulse-pack")
    }

    /// A PNG with a tEXt chunk inserted after IHDR: same picture, different bytes.
    static func pngWithText(_ png: [UInt8], _ text: String) -> [UInt8] {
        let ihdrEnd = 8 + 8 + 13 + 4
        let body = Array("tEXt".utf8) + Array("Comment".utf8) + [0] + Array(text.utf8)
        var chunk = withUnsafeBytes(of: UInt32(body.count - 4).bigEndian, Array.init) + body
        chunk += withUnsafeBytes(of: crc32(body).bigEndian, Array.init)
        return Array(png[..<ihdrEnd]) + chunk + Array(png[ihdrEnd...])
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xffff_ffff
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xedb8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
