import Foundation
import PulseCore
import PulseStore
import PulseCrypto
import Testing
@testable import PulseOps

/// gc, run against a folder target and S3. Publish times on S3 are the server's, so the tests move
/// gc's clock ("now") instead of the files' times.
@Suite(.serialized) struct GCSuiteTests {
    static let v1 = ["old slide A", "shared slide B"]
    static let v2 = ["shared slide B", "new slide C"]

    /// Pushes v1 then v2 of session keynote. Returns the two session packageVersions.
    func pushTwoVersions(_ harness: Harness, _ package: TestPackage) throws -> (String, String) {
        let first = try package.publish(slides: Self.v1)
        _ = try Pusher(package: package.package, target: harness.target).run()
        let second = try package.publish(slides: Self.v2)
        _ = try Pusher(package: package.package, target: harness.target).run()
        return (first, second)
    }

    @Test(arguments: TargetKind.allCases)
    func keepOneRemovesTheOldManifestAndItsOnlyBlob(kind: TargetKind) throws {
        let harness = try Harness(kind)
        let package = TestPackage()
        defer { package.cleanUp(); harness.cleanUp() }
        let (old, current) = try pushTwoVersions(harness, package)
        let later = Date().addingTimeInterval(3600)

        let dry = runCLI(GCCommand.make, [harness.location, "--keep", "1", "--grace", "30m", "--dry-run"] + harness.options,
                         variables: harness.variables, now: later)
        #expect(dry.code == 0, "\(dry.err)")
        #expect(dry.out.contains("would delete sessions/keynote/\(old).json"))
        #expect(dry.out.contains("would delete assets/\(TestPackage.hash("old slide A"))"))
        #expect(try harness.paths().contains("assets/\(TestPackage.hash("old slide A"))"), "a dry run deletes nothing")

        let result = runCLI(GCCommand.make, [harness.location, "--keep", "1", "--grace", "30m", "--json"] + harness.options,
                            variables: harness.variables, now: later)
        #expect(result.code == 0, "\(result.err)")
        let report = try JSONSerialization.jsonObject(with: Data(result.out.joined().utf8)) as! [String: Any]
        #expect(report["manifests"] as? [String] == ["sessions/keynote/\(old).json"])
        #expect(report["blobs"] as? [String] == ["assets/\(TestPackage.hash("old slide A"))"])
        let paths = try harness.paths()
        #expect(paths.contains("sessions/keynote/\(current).json"))
        #expect(paths.contains("assets/\(TestPackage.hash("shared slide B"))"))
        #expect(paths.contains("assets/\(TestPackage.hash("new slide C"))"))
        #expect(paths.contains("assets/\(TestPackage.hash("logo-v1"))"))
        #expect(!paths.contains("sessions/keynote/\(old).json"))
        #expect(!paths.contains("assets/\(TestPackage.hash("old slide A"))"))
    }

    @Test(arguments: TargetKind.allCases)
    func withinTheGracePeriodOldManifestsAndTheirBlobsStay(kind: TargetKind) throws {
        let harness = try Harness(kind)
        let package = TestPackage()
        defer { package.cleanUp(); harness.cleanUp() }
        let (old, _) = try pushTwoVersions(harness, package)
        let result = runCLI(GCCommand.make, [harness.location, "--keep", "1", "--grace", "2h", "--json"] + harness.options,
                            variables: harness.variables, now: Date().addingTimeInterval(3600))
        #expect(result.code == 0, "\(result.err)")
        let report = try JSONSerialization.jsonObject(with: Data(result.out.joined().utf8)) as! [String: Any]
        #expect(report["manifests"] as? [String] == [])
        #expect(report["blobs"] as? [String] == [])
        #expect(try harness.paths().contains("sessions/keynote/\(old).json"))
        #expect(try harness.paths().contains("assets/\(TestPackage.hash("old slide A"))"))
    }

    @Test(arguments: TargetKind.allCases)
    func withoutKeepEveryManifestStaysButStrayBlobsGo(kind: TargetKind) throws {
        let harness = try Harness(kind)
        let package = TestPackage()
        defer { package.cleanUp(); harness.cleanUp() }
        let (old, _) = try pushTwoVersions(harness, package)
        let stray = Data("nobody names me".utf8)
        let strayPath = "assets/\(PulseCrypto.SHA256.hex(stray))"
        try harness.target.write(strayPath, data: stray, kind: .blob)

        // Just written: inside the grace period, it may belong to a push in progress.
        let early = runCLI(GCCommand.make, [harness.location, "--grace", "1h"] + harness.options, variables: harness.variables)
        #expect(early.code == 0, "\(early.err)")
        #expect(try harness.paths().contains(strayPath))

        let late = runCLI(GCCommand.make, [harness.location, "--grace", "1h"] + harness.options,
                          variables: harness.variables, now: Date().addingTimeInterval(7200))
        #expect(late.code == 0, "\(late.err)")
        #expect(late.out.contains("deleted \(strayPath)"))
        let paths = try harness.paths()
        #expect(!paths.contains(strayPath))
        #expect(paths.contains("sessions/keynote/\(old).json"))
        #expect(paths.contains("assets/\(TestPackage.hash("old slide A"))"))
    }

    @Test(arguments: TargetKind.allCases)
    func gcRefusesATargetWithoutIndex(kind: TargetKind) throws {
        let harness = try Harness(kind)
        defer { harness.cleanUp() }
        try harness.target.write("assets/\(TestPackage.hash("x"))", data: Data("x".utf8), kind: .blob)
        let result = runCLI(GCCommand.make, [harness.location, "--grace", "0s"] + harness.options,
                            variables: harness.variables, now: Date().addingTimeInterval(3600))
        #expect(result.code == 65)
        #expect(result.err.contains("index.json") && result.err.contains("missing"), "\(result.err)")
        #expect(try harness.paths().count == 1)
    }

    /// gc on the package folder itself: old versions and blobs go, key tables and the secret stay,
    /// stale temp files go, fresh ones stay, and a build holding the lock stops gc.
    @Test func gcOnThePackageFolder() throws {
        let package = TestPackage()
        defer { package.cleanUp() }
        let old = try package.publish(slides: Self.v1, mtime: Date().addingTimeInterval(-3 * 86400))
        let current = try package.publish(slides: Self.v2)
        let staleTemp = package.root.appendingPathComponent("assets/.tmp-abandoned")
        let freshTemp = package.root.appendingPathComponent("sessions/keynote/.tmp-in-progress")
        try Data("x".utf8).write(to: staleTemp)
        try Data("y".utf8).write(to: freshTemp)
        try package.setModified(staleTemp, Date().addingTimeInterval(-7200))
        let oldBlob = package.package.assets.url(for: TestPackage.hash("old slide A"))
        try package.setModified(oldBlob, Date().addingTimeInterval(-3 * 86400))
        FileManager.default.createFile(atPath: package.package.lockURL.path, contents: nil)

        let holder = try PackageLock(package.package)
        let locked = runCLI(GCCommand.make, [package.root.path, "--keep", "1", "--grace", "1d"])
        #expect(locked.code == 1)
        #expect(locked.err.contains("another pulse-pack"), "\(locked.err)")
        withExtendedLifetime(holder) {}
        _ = consume holder

        let result = runCLI(GCCommand.make, [package.root.path, "--keep", "1", "--grace", "1d"])
        #expect(result.code == 0, "\(result.err)")
        #expect(!FileManager.default.fileExists(atPath: package.package.manifestURL(.sessions, id: "keynote", packageVersion: old).path))
        #expect(FileManager.default.fileExists(atPath: package.package.manifestURL(.sessions, id: "keynote", packageVersion: current).path))
        #expect(!FileManager.default.fileExists(atPath: oldBlob.path))
        #expect(!FileManager.default.fileExists(atPath: staleTemp.path))
        #expect(FileManager.default.fileExists(atPath: freshTemp.path))
        #expect(FileManager.default.fileExists(atPath: package.package.secretURL.path))
        #expect(FileManager.default.fileExists(atPath: package.package.keyTableURL(sessionId: "keynote", deckVersion: 1).path))
        #expect(try PulsePackage(root: package.root).readIndex().sessions["keynote"]?.packageVersion == current)
    }

    /// Newest by publish time (mtime), not by name; the current one stays even when it is the oldest
    /// (a rollback re-pointed index.json at it).
    @Test func keepCountsNewestByPublishTimeAndAlwaysKeepsTheCurrent() throws {
        let package = TestPackage()
        defer { package.cleanUp() }
        let day: TimeInterval = 86400
        let v1 = try package.publish(slides: ["k1"], mtime: Date().addingTimeInterval(-9 * day))
        let v2 = try package.publish(slides: ["k2"], mtime: Date().addingTimeInterval(-8 * day))
        let v3 = try package.publish(slides: ["k3"], mtime: Date().addingTimeInterval(-7 * day))
        var index = try package.package.readIndex()
        index.sessions["keynote"]!.packageVersion = v1
        try package.package.writeIndex(index)
        for hash in ["k1", "k2", "k3"].map(TestPackage.hash) {
            try package.setModified(package.package.assets.url(for: hash), Date().addingTimeInterval(-9 * day))
        }
        let result = runCLI(GCCommand.make, [package.root.path, "--keep", "1", "--grace", "1d", "--json"])
        #expect(result.code == 0, "\(result.err)")
        let report = try JSONSerialization.jsonObject(with: Data(result.out.joined().utf8)) as! [String: Any]
        #expect(report["manifests"] as? [String] == ["sessions/keynote/\(v2).json"])
        #expect(report["blobs"] as? [String] == ["assets/\(TestPackage.hash("k2"))"])
        for kept in [v1, v3] {
            #expect(FileManager.default.fileExists(atPath: package.package.manifestURL(.sessions, id: "keynote", packageVersion: kept).path))
        }
    }

    @Test func durations() throws {
        #expect(try GCCommand.parseDuration("7d") == 7 * 86400)
        #expect(try GCCommand.parseDuration("12h") == 12 * 3600)
        #expect(try GCCommand.parseDuration("30m") == 1800)
        #expect(try GCCommand.parseDuration("0") == 0)
        for bad in ["", "7", "d", "-1d", "1w", "1.5.5h"] {
            #expect(throws: (any Error).self, "\(bad)") { try GCCommand.parseDuration(bad) }
        }
        let result = runCLI(GCCommand.make, ["/tmp", "--grace", "soon"])
        #expect(result.code == 64)
    }
}
