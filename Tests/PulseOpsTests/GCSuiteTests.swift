import Foundation
import PulseCore
import PulseStore
import PulseCrypto
import PulseTestSupport
import Testing
@testable import PulseOps
@testable import PulseOpsCLI

/// gc, run against a folder target and S3, and on a package folder. Versions are ordered and aged by the
/// index's history (`publishedAt`); blobs by their own publish time (file mtime, S3 LastModified), so
/// the target tests move gc's clock ("now") instead of the files' times.
@Suite(.serialized) struct GCSuiteTests {
    static let v1 = ["old slide A", "shared slide B"]
    static let v2 = ["shared slide B", "new slide C"]

    /// Publishes and pushes v1 then v2 of session keynote. Returns the two session packageVersions.
    func pushTwoVersions(_ harness: Harness, _ package: TestPackage) throws -> (String, String) {
        let first = try package.publish(slides: Self.v1)
        _ = try Pusher(package: package.root, target: harness.target).run()
        let second = try package.publish(slides: Self.v2)
        _ = try Pusher(package: package.root, target: harness.target).run()
        return (first, second)
    }

    func report(_ result: CLIResult) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(result.out.joined().utf8)) as! [String: Any]
    }

    @Test(arguments: TargetKind.allCases)
    func keepOneRemovesTheOldVersionItsBlobListAndItsOnlyBlob(kind: TargetKind) throws {
        let harness = try Harness(kind)
        let package = try TestPackage()
        _ = try pushTwoVersions(harness, package)
        let later = Date().addingTimeInterval(3600)
        let oldList = TestPackage.refs(Self.v1), oldBlob = "assets/\(TestPackage.hash("old slide A"))"

        let dry = runCLI(GCCommand.make, [harness.location, "--keep", "1", "--grace", "30m", "--dry-run"] + harness.options,
                         variables: harness.variables, now: later)
        #expect(dry.code == 0, "\(dry.err)")
        #expect(dry.out.contains("would delete \(oldList)"))
        #expect(dry.out.contains("would delete \(oldBlob)"))
        #expect(try harness.paths().contains(oldBlob), "a dry run deletes nothing")
        let indexBefore = try harness.target.read("index.json")

        let result = runCLI(GCCommand.make, [harness.location, "--keep", "1", "--grace", "30m", "--json"] + harness.options,
                            variables: harness.variables, now: later)
        #expect(result.code == 0, "\(result.err)")
        let json = try report(result)
        #expect(json["files"] as? [String] == [oldList])
        #expect(json["blobs"] as? [String] == [oldBlob])
        #expect((json["versions"] as? [String])?.count == 1 && (json["versions"] as? [String])?.first?.hasPrefix("sessions/keynote@") == true)
        let paths = try harness.paths()
        #expect(paths.contains(TestPackage.refs(Self.v2)))
        #expect(paths.contains("assets/\(TestPackage.hash("shared slide B"))"))
        #expect(paths.contains("assets/\(TestPackage.hash("new slide C"))"))
        #expect(paths.contains("assets/\(TestPackage.hash("logo-v1"))"))
        #expect(!paths.contains(oldList) && !paths.contains(oldBlob))
        // The index no longer lists the dropped version, so it never names a file that is gone.
        let index = try PublicFolder.parseIndex(try #require(try harness.target.read("index.json")), path: "index.json")
        #expect(index.history["sessions/keynote"]?.count == 1)
        #expect(try harness.target.read("index.json") != indexBefore)
    }

    @Test(arguments: TargetKind.allCases)
    func withinTheGracePeriodOldVersionsAndTheirBlobsStay(kind: TargetKind) throws {
        let harness = try Harness(kind)
        let package = try TestPackage()
        _ = try pushTwoVersions(harness, package)
        let result = runCLI(GCCommand.make, [harness.location, "--keep", "1", "--grace", "2h", "--json"] + harness.options,
                            variables: harness.variables, now: Date().addingTimeInterval(3600))
        #expect(result.code == 0, "\(result.err)")
        let json = try report(result)
        #expect(json["files"] as? [String] == [])
        #expect(json["blobs"] as? [String] == [])
        #expect(try harness.paths().contains(TestPackage.refs(Self.v1)))
        #expect(try harness.paths().contains("assets/\(TestPackage.hash("old slide A"))"))
    }

    @Test(arguments: TargetKind.allCases)
    func withoutKeepEveryVersionStaysButStrayBlobsGo(kind: TargetKind) throws {
        let harness = try Harness(kind)
        let package = try TestPackage()
        _ = try pushTwoVersions(harness, package)
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
        #expect(paths.contains(TestPackage.refs(Self.v1)))
        #expect(paths.contains("assets/\(TestPackage.hash("old slide A"))"))
    }

    @Test(arguments: TargetKind.allCases)
    func gcRefusesATargetWithoutIndex(kind: TargetKind) throws {
        let harness = try Harness(kind)
        try harness.target.write("assets/\(TestPackage.hash("x"))", data: Data("x".utf8), kind: .blob)
        let result = runCLI(GCCommand.make, [harness.location, "--grace", "0s"] + harness.options,
                            variables: harness.variables, now: Date().addingTimeInterval(3600))
        #expect(result.code == 65)
        #expect(result.err.contains("index.json") && result.err.contains("missing"), "\(result.err)")
        #expect(try harness.paths().count == 1)
    }

    /// A kept version whose blob list is gone: gc cannot know its blobs, so it deletes nothing.
    @Test func aMissingBlobListOfAKeptVersionStopsGcBeforeAnyDeletion() throws {
        let harness = try Harness(.folder)
        let package = try TestPackage()
        _ = try pushTwoVersions(harness, package)
        try harness.target.delete(TestPackage.refs(Self.v2))
        let before = try harness.paths()
        let result = runCLI(GCCommand.make, [harness.location, "--keep", "1", "--grace", "0"], now: Date().addingTimeInterval(3600))
        #expect(result.code == 65)
        #expect(result.err.contains(TestPackage.refs(Self.v2)) && result.err.contains("stopped before deleting anything"), "\(result.err)")
        #expect(try harness.paths() == before)
    }

    /// gc on the package folder itself: both parts. The old version's manifest, blob list, key table and
    /// only blob go; the current ones stay; stale temp files go, fresh ones stay; both indexes lose the
    /// old version; and a build holding the lock stops gc.
    @Test func gcOnThePackageFolder() throws {
        let package = try TestPackage()
        let day: TimeInterval = 86400
        let old = try package.publish(slides: Self.v1, publishedAt: Date().addingTimeInterval(-3 * day))
        let current = try package.publish(slides: Self.v2)
        let staleTemp = package.root.appendingPathComponent("public/assets/.tmp-abandoned")
        let freshTemp = package.root.appendingPathComponent("server/sessions/keynote/.tmp-in-progress")
        try Data("x".utf8).write(to: staleTemp)
        try Data("y".utf8).write(to: freshTemp)
        try package.setModified(staleTemp, Date().addingTimeInterval(-7200))
        let oldBlob = package.package.assets.url(for: TestPackage.hash("old slide A"))
        try package.setModified(oldBlob, Date().addingTimeInterval(-3 * day))
        let manifest = { (version: String) in package.package.manifestURL(.sessions, id: "keynote", packageVersion: version).path }
        let table = { (deck: Int) in package.package.keyTableURL(sessionId: "keynote", deckVersion: deck).path }
        let exists = { (path: String) in FileManager.default.fileExists(atPath: path) }
        #expect(exists(table(1)) && exists(table(2)))

        let holder = try PackageLock(package.package)
        let locked = runCLI(GCCommand.make, [package.root.path, "--keep", "1", "--grace", "1d"])
        #expect(locked.code == 1)
        #expect(locked.err.contains("another pulse-pack"), "\(locked.err)")
        withExtendedLifetime(holder) {}
        _ = consume holder

        let result = runCLI(GCCommand.make, [package.root.path, "--keep", "1", "--grace", "1d", "--json"])
        #expect(result.code == 0, "\(result.err)")
        let json = try report(result)
        #expect(json["versions"] as? [String] == ["sessions/keynote/\(old)"])
        #expect(!exists(manifest(old)) && exists(manifest(current)))
        #expect(!exists(package.root.appendingPathComponent("public/" + TestPackage.refs(Self.v1)).path))
        #expect(exists(package.root.appendingPathComponent("public/" + TestPackage.refs(Self.v2)).path))
        #expect(!exists(oldBlob.path))
        #expect(!exists(table(1)), "the key table of a deckVersion no kept version has goes")
        #expect(exists(table(2)))
        #expect(!exists(staleTemp.path))
        #expect(exists(freshTemp.path))
        let index = try package.package.readIndex()
        #expect(index.sessions["keynote"]?.packageVersion == current)
        #expect(index.versions(.sessions, "keynote").map(\.packageVersion) == [current])
        #expect(try package.package.publicPart.readIndex() == index.publicIndex)
    }

    /// Newest by the history (publish time), not by name or file time; a revert is a new publication.
    @Test func keepCountsVersionsInHistoryOrder() throws {
        let package = try TestPackage()
        let day: TimeInterval = 86400
        let v1 = try package.publish(slides: ["k1"], publishedAt: Date().addingTimeInterval(-9 * day))
        let v2 = try package.publish(slides: ["k2"], publishedAt: Date().addingTimeInterval(-8 * day))
        let v3 = try package.publish(slides: ["k3"], publishedAt: Date().addingTimeInterval(-7 * day))
        // A rollback to v1, six days ago: v1 is current again, published last.
        #expect(try package.publish(slides: ["k1"], publishedAt: Date().addingTimeInterval(-6 * day)) == v1)
        #expect(try package.package.readIndex().versions(.sessions, "keynote").map(\.packageVersion) == [v1, v3, v2])
        for hash in ["k1", "k2", "k3"].map(TestPackage.hash) {
            try package.setModified(package.package.assets.url(for: hash), Date().addingTimeInterval(-9 * day))
        }
        // File times say v2 is the newest: gc must not care.
        try package.setModified(package.package.manifestURL(.sessions, id: "keynote", packageVersion: v2), Date())
        let result = runCLI(GCCommand.make, [package.root.path, "--keep", "2", "--grace", "1d", "--json"])
        #expect(result.code == 0, "\(result.err)")
        let json = try report(result)
        #expect(json["versions"] as? [String] == ["sessions/keynote/\(v2)"])
        #expect(json["blobs"] as? [String] == ["public/assets/\(TestPackage.hash("k2"))"])
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
