import Foundation
import PulseCore
import PulseStore
import PulseTestSupport
import Testing
@testable import PulseOps
@testable import PulseOpsCLI

/// One push suite, run against a folder target and against S3 (moto with signature checking).
@Suite(.serialized) struct PushSuiteTests {
    static let slides = ["slide one ciphertext", "slide two ciphertext", "slide three ciphertext"]

    @Test(arguments: TargetKind.allCases)
    func pushPublishesThePublicPartOnlyAndASecondPushSendsNothing(kind: TargetKind) throws {
        let harness = try Harness(kind)
        let package = try TestPackage()
        try package.publish(slides: Self.slides)

        let first = runCLI(PushCommand.make, [package.root.path, "--to", harness.location, "--json"] + harness.options, variables: harness.variables)
        #expect(first.code == 0, "\(first.err)")
        let report = try JSONSerialization.jsonObject(with: Data(first.out.joined().utf8)) as! [String: Any]
        // 3 slides + logo, 3 blob lists (session, series, app config), the app config, index.json.
        #expect(report["uploaded"] as? Int == 9)
        #expect(report["skipped"] as? Int == 0)
        #expect((report["bytes"] as? Int ?? 0) > 0)
        #expect(report["seconds"] is Double || report["seconds"] is Int)

        let paths = try harness.paths()
        #expect(paths.contains("index.json"))
        for slide in Self.slides { #expect(paths.contains("assets/\(TestPackage.hash(slide))")) }
        #expect(paths.contains(TestPackage.refs(Self.slides)))
        #expect(paths.filter { $0.hasPrefix("appconfig/acme/") }.count == 1)
        // Nothing of the server part: no manifest, gated resource or key table; no secret, no lock.
        #expect(paths.allSatisfy { $0 == "index.json" || ["assets", "refs", "appconfig"].contains($0.split(separator: "/")[0]) }, "\(paths)")
        #expect(!paths.contains { $0.contains(".tmp-") })
        #expect(try harness.target.read("index.json") == (try Data(contentsOf: package.package.publicIndexURL)))

        let second = runCLI(PushCommand.make, [package.root.path, "--to", harness.location, "--json"] + harness.options, variables: harness.variables)
        #expect(second.code == 0, "\(second.err)")
        let again = try JSONSerialization.jsonObject(with: Data(second.out.joined().utf8)) as! [String: Any]
        #expect(again["uploaded"] as? Int == 0)
        #expect(again["skipped"] as? Int == 9)
        #expect(again["bytes"] as? Int == 0)
    }

    @Test(arguments: TargetKind.allCases)
    func blobsGoFirstManifestsNextIndexLast(kind: TargetKind) throws {
        let harness = try Harness(kind)
        let package = try TestPackage()
        try package.publish(slides: Self.slides)
        let recorder = RecordingTarget(harness.target)
        _ = try Pusher(package: package.root, target: recorder, jobs: 3).run()

        let writes = recorder.writes
        #expect(writes.last == "index.json")
        let firstManifest = writes.firstIndex { !$0.hasPrefix("assets/") }!
        #expect(writes[..<firstManifest].allSatisfy { $0.hasPrefix("assets/") })
        #expect(writes[firstManifest...].allSatisfy { !$0.hasPrefix("assets/") })
        #expect(writes.count == 9)
    }

    @Test(arguments: TargetKind.allCases)
    func aPushKilledHalfwayPublishesNothingAndARerunFinishes(kind: TargetKind) throws {
        let harness = try Harness(kind)
        let package = try TestPackage()
        try package.publish(slides: Self.slides)

        let killed = RecordingTarget(harness.target, failAfter: 2)
        #expect(throws: OpsError.self) { try Pusher(package: package.root, target: killed, jobs: 1).run() }
        var paths = try harness.paths()
        #expect(paths.count == 2 && paths.allSatisfy { $0.hasPrefix("assets/") }, "only blobs, no manifest, no index: \(paths)")

        // Killed after blobs and some manifests: still no index.json.
        let killedLater = RecordingTarget(harness.target, failAfter: 3)
        #expect(throws: OpsError.self) { try Pusher(package: package.root, target: killedLater, jobs: 1).run() }
        paths = try harness.paths()
        #expect(!paths.contains("index.json"))

        let report = try Pusher(package: package.root, target: harness.target).run()
        #expect(report.skipped == 5)
        #expect(report.uploaded == 4)
        #expect(try harness.paths().count == 9)
    }

    @Test(arguments: TargetKind.allCases)
    func aCorruptedLocalBlobIsNeverUploaded(kind: TargetKind) throws {
        let harness = try Harness(kind)
        let package = try TestPackage()
        try package.publish(slides: Self.slides)
        let damaged = TestPackage.hash(Self.slides[1])
        try package.corrupt(damaged)

        let result = runCLI(PushCommand.make, [package.root.path, "--to", harness.location] + harness.options, variables: harness.variables)
        #expect(result.code == 65)
        let lines = result.err.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(result.err.contains("assets/\(damaged)") && result.err.contains("damaged"), "\(result.err)")
        let paths = try harness.paths()
        #expect(!paths.contains("assets/\(damaged)"))
        #expect(!paths.contains("index.json"))
        #expect(!paths.contains { !$0.hasPrefix("assets/") }, "no manifest may be published: \(paths)")
    }

    @Test(arguments: TargetKind.allCases)
    func aNewVersionPublishesOnlyWhatChanged(kind: TargetKind) throws {
        let harness = try Harness(kind)
        let package = try TestPackage()
        try package.publish(slides: Self.slides)
        _ = try Pusher(package: package.root, target: harness.target).run()
        let v2 = try package.publish(slides: [Self.slides[0], "a brand new slide"])
        let report = try Pusher(package: package.root, target: harness.target).run()
        // New: one blob, the new session's blob list, index.json.
        #expect(report.uploaded == 3)
        let index = try JSONDecoder().decode(PublicIndex.self, from: try harness.target.read("index.json")!)
        #expect(index.history["sessions/keynote"]?.count == 2)
        #expect(index.history["sessions/keynote"]?.first.map { "refs/\($0.refs).json" } == TestPackage.refs([Self.slides[0], "a brand new slide"]))
        #expect(try harness.target.size(of: TestPackage.refs([Self.slides[0], "a brand new slide"])) != nil)
        #expect(try harness.target.size(of: "sessions/keynote/\(v2).json") == nil, "session manifests are never pushed")
    }

    /// Two packages (two ids, so two secrets' worth of deckVersions) never overwrite each other's index
    /// on one target, unless --force says so.
    @Test(arguments: TargetKind.allCases)
    func aTargetHoldingAnotherPackageIsRefusedUnlessForced(kind: TargetKind) throws {
        let harness = try Harness(kind)
        let mine = try TestPackage(), theirs = try TestPackage()
        try mine.publish(slides: Self.slides)
        try theirs.publish(slides: ["their slide"])
        let push = { (package: TestPackage, extra: [String]) in
            runCLI(PushCommand.make, [package.root.path, "--to", harness.location] + extra + harness.options, variables: harness.variables)
        }
        #expect(push(mine, []).code == 0)
        let published = try harness.target.read("index.json")

        let refused = push(theirs, [])
        #expect(refused.code == 65)
        #expect(refused.err.split(separator: "\n").count == 1)
        #expect(refused.err.contains("holds package \(mine.packageId)") && refused.err.contains("this is package \(theirs.packageId)")
            && refused.err.contains("--force"), "\(refused.err)")
        #expect(try harness.target.read("index.json") == published)
        #expect(!(try harness.paths()).contains("assets/\(TestPackage.hash("their slide"))"), "nothing is sent before the check")

        #expect(push(theirs, ["--force"]).code == 0)
        let index = try PublicFolder.parseIndex(try #require(try harness.target.read("index.json")), path: "index.json")
        #expect(index.packageId == theirs.packageId)

        // A target an older pulse-pack published to (manifests in the open there) is refused too.
        let legacy = Data(#"{"format":"pulse-package/1","sessions":{},"series":{},"appconfig":{}}"#.utf8)
        try harness.target.write("index.json", data: legacy, kind: .index)
        let old = push(mine, [])
        #expect(old.code == 65)
        #expect(old.err.contains("older pulse-pack") && old.err.contains("sessions/"), "\(old.err)")
    }
}
