import Foundation
import PulseCore
import PulseStore
import PulseTestSupport
import Testing
@testable import PulseOps
@testable import PulseOpsCLI

/// Issue 12 item 2 and issue 11 item 7: gc deletes nothing on partial knowledge (a listing or a blob list
/// it cannot read whole stops it before any delete), never drops what the index names as current,
/// reports what it deleted even when it stops halfway, and decides alike on a package, a pushed folder
/// and S3, saying why each kept version stays.
@Suite(.serialized) struct GCStrictnessTests {
    static let v1 = ["strict old slide", "strict shared slide"]
    static let v2 = ["strict shared slide", "strict new slide"]
    /// gc's clock: an hour after the pushes, so with `--grace 30m` v1 and its only blob may go.
    static let later = Date().addingTimeInterval(3600)

    /// v1 then v2 of keynote, pushed to `target`.
    func pushTwoVersions(_ package: TestPackage, to target: any PushTarget) throws {
        try package.publish(slides: Self.v1)
        _ = try Pusher(package: package.root, target: target).run()
        try package.publish(slides: Self.v2)
        _ = try Pusher(package: package.root, target: target).run()
    }

    func gc(_ s3: ProxiedS3, _ extra: [String] = []) -> CLIResult {
        runCLI(GCCommand.make, [s3.location, "--keep", "1", "--grace", "30m"] + extra + s3.options, variables: s3.variables, now: Self.later)
    }

    /// Everything stored and the index bytes, to show that nothing changed.
    func snapshot(_ s3: ProxiedS3) throws -> (Set<String>, Data?) { (try s3.paths(), try s3.direct.read("index.json")) }

    @Test(arguments: ["truncate", "empty"])
    func aListingThatIsCutOrEmptyStopsGcBeforeAnyDelete(fault: String) throws {
        let s3 = try ProxiedS3(retries: 1)
        let package = try TestPackage()
        defer { s3.proxy.stop() }
        try pushTwoVersions(package, to: s3.direct)
        let before = try snapshot(s3)
        try s3.proxy.inject([.init(method: "GET", match: "list-type=2", fault: fault)])
        let result = gc(s3)
        #expect(result.code == 1)
        #expect(result.err.split(separator: "\n").count == 1)
        #expect(result.err.contains("listing is malformed") && result.err.contains("stopped before deleting anything"), "\(result.err)")
        #expect(try snapshot(s3) == before)
        #expect(try s3.proxy.log().allSatisfy { $0.method != "DELETE" || $0.target.contains(S3Target.leaseName) })
    }

    @Test func aListingTruncatedWithoutAContinuationTokenStopsGc() throws {
        let s3 = try ProxiedS3(retries: 0)
        let package = try TestPackage()
        defer { s3.proxy.stop() }
        try pushTwoVersions(package, to: s3.direct)
        let before = try snapshot(s3)
        var target = s3.target
        target.pageSize = 2
        try s3.proxy.inject([.init(method: "GET", match: "list-type=2", fault: "notoken")])
        #expect {
            try GarbageCollector(target: target, keep: 1, grace: 1800, dryRun: false, now: Self.later).run()
        } throws: { error in
            let error = OpsError.from(error)
            return error.message.contains("IsTruncated without a NextContinuationToken") && error.message.contains("stopped before deleting anything")
        }
        #expect(try snapshot(s3) == before)
    }

    /// The current version's blob list answered 404, or an empty 200: its blobs are unknown, so nothing goes.
    @Test(arguments: ["notfound", "empty"])
    func aBlobListOfTheCurrentVersionThatCannotBeReadStopsGc(fault: String) throws {
        let s3 = try ProxiedS3(retries: 0)
        let package = try TestPackage()
        defer { s3.proxy.stop() }
        try pushTwoVersions(package, to: s3.direct)
        let before = try snapshot(s3)
        let current = TestPackage.refs(Self.v2)
        try s3.proxy.inject([.init(method: "GET", match: "/live/pulse/\(current)", fault: fault)])
        for extra in [["--dry-run"], []] {
            let result = gc(s3, extra)
            #expect(result.code == 65, "\(extra): \(result.err)")
            #expect(result.err.contains(current) && result.err.contains("stopped before deleting anything"), "\(result.err)")
            #expect(!result.out.contains { $0.contains("delete") }, "not even a dry run plans deletions: \(result.out)")
        }
        #expect(try snapshot(s3) == before)
    }

    /// gc stopped by a failing delete has printed each deletion it made, then says it stopped.
    @Test func gcStoppedHalfwayReportsWhatItDeleted() throws {
        let s3 = try ProxiedS3(retries: 0)
        let package = try TestPackage()
        defer { s3.proxy.stop() }
        try pushTwoVersions(package, to: s3.direct)
        try s3.proxy.inject([.init(method: "DELETE", match: "/live/pulse/assets/", fault: "reset")])
        let oldList = TestPackage.refs(Self.v1)
        let result = gc(s3)
        #expect(result.code == 1)
        #expect(result.out.first == "deleted \(oldList)", "\(result.out)")
        #expect(result.out.last?.contains("stopped after deleting 1 files, 0 blobs") == true, "\(result.out)")
        #expect(result.err.contains("assets/\(TestPackage.hash("strict old slide"))"), "\(result.err)")
        #expect(try !s3.paths().contains(oldList))
        #expect(try inconsistencies(s3.direct).isEmpty, "the index was rewritten first")

        let json = gc(s3, ["--json"])
        #expect(json.code == 1)
        let object = try JSONSerialization.jsonObject(with: Data(json.out.joined(separator: "\n").utf8)) as! [String: Any]
        #expect(object["stopped"] is String && object["blobs"] as? [String] == [])
    }

    /// An index whose history does not list the current app config first (edited, or written by another
    /// tool): the version the index names as current stays whatever --keep says.
    @Test(arguments: TargetKind.allCases)
    func theVersionTheIndexNamesAsCurrentIsNeverDropped(kind: TargetKind) throws {
        let harness = try Harness(kind)
        let package = try TestPackage()
        try package.publish(slides: Self.v1, logo: "logo one", publishedAt: Date().addingTimeInterval(-7200))
        try package.publish(slides: Self.v1, logo: "logo two")
        _ = try Pusher(package: package.root, target: harness.target).run()
        var index = try PublicFolder.parseIndex(try #require(try harness.target.read("index.json")), path: "index.json")
        let current = index.appconfig["acme"]!.packageVersion
        index.history["appconfig/acme"]!.reverse()
        try harness.target.write("index.json", data: Data(index.fileBytes), kind: .index)

        let result = runCLI(GCCommand.make, [harness.location, "--keep", "1", "--grace", "0", "--json"] + harness.options,
                            variables: harness.variables, now: Self.later)
        #expect(result.code == 0, "\(result.err)")
        #expect(try harness.paths().contains("appconfig/acme/\(current).json"))
        #expect(try inconsistencies(harness.target).isEmpty)
        let json = try JSONSerialization.jsonObject(with: Data(result.out.joined(separator: "\n").utf8)) as! [String: Any]
        let kept = (json["kept"] as! [[String: Any]]).filter { ($0["version"] as! String).hasPrefix("appconfig/acme@") }
        #expect(kept.count == 2 && kept.allSatisfy { ($0["reasons"] as! [String]).contains("current") }, "\(kept)")
    }

    /// The same on a package: a server index whose history lists the current session version second.
    @Test func onAPackageTheCurrentSessionVersionIsNeverDropped() throws {
        let package = try TestPackage()
        try package.publish(slides: Self.v1, publishedAt: Date().addingTimeInterval(-7200))
        let current = try package.publish(slides: Self.v2)
        var index = try package.package.readIndex()
        index.history["sessions/keynote"]!.reverse()
        try package.package.writeIndexes(index)
        let result = runCLI(GCCommand.make, [package.root.path, "--keep", "1", "--grace", "0"], now: Self.later)
        #expect(result.code == 0, "\(result.err)")
        #expect(FileManager.default.fileExists(atPath: package.package.manifestURL(.sessions, id: "keynote", packageVersion: current).path))
        #expect(FileManager.default.fileExists(atPath: package.root.appendingPathComponent("public/" + TestPackage.refs(Self.v2)).path))
    }

    /// Issue 11.7: a package, its pushed folder and its S3 copy drop the same versions, by the history's
    /// publish times (file and push times are made to say otherwise), and a dry run says why each stays.
    @Test func aPackageAPushedFolderAndS3DecideAlikeAndSayWhy() throws {
        let package = try TestPackage()
        let folder = try Harness(.folder), s3 = try Harness(.s3)
        let day: TimeInterval = 86400
        let now = Date()
        for (n, age) in [(1, 9 * day), (2, 8 * day), (3, 3600.0)] {
            try package.publish(slides: ["decide slide \(n)"], publishedAt: now.addingTimeInterval(-age))
        }
        _ = try Pusher(package: package.root, target: folder.target).run()
        _ = try Pusher(package: package.root, target: s3.target).run()
        // The oldest version's blob list looks newest by file time on the pushed folder.
        try package.setModified(URL(fileURLWithPath: folder.location).appendingPathComponent(TestPackage.refs(["decide slide 1"])), now)

        func dropped(_ location: String, _ options: [String], _ variables: [String: String]) throws -> [String] {
            let result = runCLI(GCCommand.make, [location, "--keep", "2", "--grace", "1d", "--dry-run", "--json"] + options, variables: variables, now: now)
            #expect(result.code == 0, "\(result.err)")
            let json = try JSONSerialization.jsonObject(with: Data(result.out.joined(separator: "\n").utf8)) as! [String: Any]
            return (json["files"] as! [String]).filter { $0.contains("refs/") }.map { $0.replacingOccurrences(of: "public/", with: "") }.sorted()
        }
        let expected = [TestPackage.refs(["decide slide 1"])]
        #expect(try dropped(package.root.path, [], [:]) == expected)
        #expect(try dropped(folder.location, [], [:]) == expected)
        #expect(try dropped(s3.location, s3.options, s3.variables) == expected)

        let times = try package.package.readIndex().versions(.sessions, "keynote").map(\.publishedAt)
        let dry = runCLI(GCCommand.make, [folder.location, "--keep", "2", "--grace", "1d", "--dry-run"], now: now)
        let until = Timestamp.string(Timestamp.date(times[0])!.addingTimeInterval(day))
        #expect(dry.out.contains("keep sessions/keynote@\(times[0]): current, within --keep 2, within --grace until \(until)"), "\(dry.out)")
        #expect(dry.out.contains("keep sessions/keynote@\(times[1]): within --keep 2"), "\(dry.out)")
        #expect(dry.out.contains("would drop sessions/keynote@\(times[2])"), "\(dry.out)")
        #expect(dry.out.contains("would delete \(expected[0])"), "\(dry.out)")
    }
}
