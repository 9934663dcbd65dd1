import Foundation
import PulseCore
import PulseStore
import Synchronization
import PulseTestSupport
import Testing
@testable import PulseOps
@testable import PulseOpsCLI

/// Issue 12, items 1, 4, 5, 6: push checks what landed instead of believing the store, survives resets
/// at once, costs one listing instead of a HEAD per file, and says what failed where. Each test injects
/// its fault with the loopback proxy between pulse-pack and moto (or a folder writer that lies).
@Suite(.serialized) struct PushVerificationTests {
    static let slides = (1...6).map { "verified slide \($0) ciphertext" }

    func published() throws -> TestPackage {
        let package = try TestPackage()
        try package.publish(slides: Self.slides)
        return package
    }

    func push(_ package: TestPackage, _ s3: ProxiedS3, _ extra: [String] = []) -> CLIResult {
        runCLI(PushCommand.make, [package.root.path, "--to", s3.location] + extra + s3.options, variables: s3.variables)
    }

    /// A store that answers 200 to a PUT and keeps nothing: push must notice before it commits.
    @Test func aStoreThatAnswers200WithoutStoringFailsThePushAndCommitsNothing() throws {
        let s3 = try ProxiedS3()
        let package = try published()
        defer { s3.proxy.stop() }
        let victim = TestPackage.hash(Self.slides[2])
        try s3.proxy.inject([.init(method: "PUT", match: "/assets/\(victim)", fault: "drop")])
        let result = push(package, s3)
        #expect(result.code == 1)
        #expect(result.err.split(separator: "\n").count == 1)
        #expect(result.err.contains("s3://\(s3.bucket)/live/pulse/assets/\(victim)") && result.err.contains("missing after upload"), "\(result.err)")
        #expect(try !s3.paths().contains("index.json"), "nothing is committed")
        #expect(try !s3.paths().contains { $0.hasPrefix("refs/") }, "no blob list goes up before its blobs are confirmed")

        try s3.proxy.clear()
        #expect(push(package, s3).code == 0, "a re-run finishes the job")
        #expect(try inconsistencies(s3.direct).isEmpty)
    }

    /// A body cut in half and stored: the ETag (MD5 of what the store kept) gives it away; retried whole.
    @Test func aCutBodyIsCaughtByItsETagAndSentAgain() throws {
        let s3 = try ProxiedS3()
        let package = try published()
        defer { s3.proxy.stop() }
        let victim = TestPackage.hash(Self.slides[0])
        try s3.proxy.inject([.init(method: "PUT", match: "/assets/\(victim)", fault: "halve", times: 1)])
        let once = push(package, s3)
        #expect(once.code == 0, "\(once.err)")
        #expect(try s3.direct.size(of: "assets/\(victim)") == Self.slides[0].utf8.count, "stored whole on the second attempt")
        #expect(try s3.proxy.log().filter { $0.target.contains(victim.hex) && $0.method == "PUT" }.count == 2)
        #expect(try inconsistencies(s3.direct).isEmpty)
    }

    @Test func aStoreThatAlwaysCutsTheBodyFailsNamingTheObjectAndCommitsNothing() throws {
        let s3 = try ProxiedS3(retries: 1)
        let package = try published()
        defer { s3.proxy.stop() }
        try s3.proxy.inject([.init(method: "PUT", match: "/assets/", fault: "halve")])
        let result = push(package, s3, ["--jobs", "1"])
        #expect(result.code == 1)
        #expect(result.err.contains("s3://\(s3.bucket)/live/pulse/assets/") && result.err.contains("kept other bytes than were sent")
            && result.err.contains("after 2 attempts"), "\(result.err)")
        #expect(try !s3.paths().contains("index.json"))
    }

    @Test func anETagThatIsNotTheMD5SentIsAnError() throws {
        let s3 = try ProxiedS3(retries: 0)
        let package = try published()
        defer { s3.proxy.stop() }
        try s3.proxy.inject([.init(method: "PUT", match: "/refs/", fault: "etag")])
        let result = push(package, s3)
        #expect(result.code == 1)
        #expect(result.err.contains("/live/pulse/refs/") && result.err.contains("ETag"), "\(result.err)")
        #expect(try !s3.paths().contains("index.json"))
    }

    /// Every PUT says what it sends: S3 itself refuses a body that does not match.
    @Test func everyUploadCarriesContentMD5AndASHA256Checksum() throws {
        let s3 = try ProxiedS3()
        let package = try published()
        defer { s3.proxy.stop() }
        #expect(push(package, s3).code == 0)
        let puts = try s3.proxy.log().filter { $0.method == "PUT" && !$0.target.contains(S3Target.leaseName) }
        #expect(puts.count == 12, "6 slides, logo, 3 blob lists, app config, index.json")
        for put in puts {
            #expect(put.headers["content-md5"]?.count == 24 && put.headers["x-amz-checksum-sha256"]?.count == 44, "\(put.target) \(put.headers)")
        }
    }

    /// A folder writer that silently keeps nothing (a full FUSE mount, a lying network file system).
    @Test func aFolderThatKeepsNothingFailsThePushBeforeItsIndex() throws {
        let package = try published()
        let temporary = try TestFolder("pulse-lying")
        let folder = temporary.url
        let victim = TestPackage.hash(Self.slides[4])
        let target = FolderTarget(root: folder) { data, url, mode in
            if url.lastPathComponent == victim.hex { return }
            try AtomicFile.write(data, to: url, mode: mode)
        }
        #expect {
            try Pusher(package: package.root, target: target).run()
        } throws: { error in
            let error = OpsError.from(error)
            return error.location == folder.appendingPathComponent("assets/\(victim)").path && error.message.contains("missing after upload")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("index.json").path))
    }

    /// An unchanged package: index.json and one listing per 1,000 objects, no HEAD per file (issue 12.5).
    @Test func aNoOpPushCostsOneReadOfTheIndexAndOneListingPerThousandObjects() throws {
        let s3 = try ProxiedS3()
        let package = try TestPackage()
        defer { s3.proxy.stop() }
        try package.publish(slides: (1...40).map { "many slides \($0)" })
        #expect(push(package, s3).code == 0)
        let objects = try s3.paths().count
        try s3.proxy.clear()
        let again = push(package, s3, ["--json"])
        #expect(again.code == 0, "\(again.err)")
        let log = try s3.proxy.log()
        #expect(log.count <= 1 + (objects + 999) / 1000 + 1, "\(log.map { "\($0.method) \($0.target)" })")
        #expect(!log.contains { $0.method == "HEAD" })
        let json = try JSONSerialization.jsonObject(with: Data(again.out.joined(separator: "\n").utf8)) as! [String: Any]
        #expect(json["uploaded"] as? Int == 0 && json["skipped"] as? Int == 40 + 1 + 3 + 1 + 1)
    }

    /// Pages of a listing are followed; a push of a new version lists, uploads, lists to verify.
    @Test func aFirstPushListsOnceUploadsThenVerifiesWithListings() throws {
        let s3 = try ProxiedS3()
        let package = try published()
        defer { s3.proxy.stop() }
        #expect(push(package, s3).code == 0)
        let log = try s3.proxy.log()
        let listings = log.filter { $0.method == "GET" && $0.target.contains("list-type=2") }
        #expect(listings.count == 4, "one before uploading, one of assets/, of refs/, of appconfig/ after: \(listings.map(\.target))")
        #expect(!log.contains { $0.method == "HEAD" })
        let puts = log.filter { $0.method == "PUT" }.map(\.target)
        #expect(puts.suffix(2).first?.contains(S3Target.leaseName) == true && puts.last?.hasSuffix("/index.json") == true,
                "the lease is renewed right before the commit: \(puts.suffix(2))")
        #expect(log.last?.method == "DELETE" && log.last?.target.contains(S3Target.leaseName) == true, "then released")
    }

    /// A connection reset in the middle of a PUT body (on a connection that carried a request before):
    /// detected at once and retried, where it once stalled until the request timeout at a full core.
    @Test func aResetInTheMiddleOfAnUploadIsRetriedAtOnce() throws {
        let s3 = try ProxiedS3(retries: 3, timeout: 20)
        let package = try TestPackage()
        defer { s3.proxy.stop() }
        try package.publish(slides: (1...12).map { String(repeating: "reset slide \($0) ", count: 20_000) })
        try s3.proxy.inject([.init(method: "PUT", match: "/assets/", fault: "reset", times: 4, skip: 1)])
        let start = Date()
        let report = try Pusher(package: package.root, target: s3.target, jobs: 2).run()
        let elapsed = Date().timeIntervalSince(start)
        #expect(report.uploaded == 12 + 1 + 3 + 1 + 1)
        #expect(try s3.proxy.log().filter { $0.fault == "reset" }.count == 4)
        // Four resets, each once a 20 s stall: a push that notices them at once is done long before one would end.
        #expect(elapsed < 10, "push took \(elapsed) s")
        #expect(try inconsistencies(s3.direct).isEmpty)
    }

    /// Item 6: a timeout names the object and the attempts, not just the endpoint.
    @Test func aTimeoutNamesTheObject() throws {
        let s3 = try ProxiedS3(retries: 1, timeout: 1)
        let package = try published()
        defer { s3.proxy.stop() }
        let victim = TestPackage.hash(Self.slides[1])
        try s3.proxy.inject([.init(method: "PUT", match: "/assets/\(victim)", fault: "stall")])
        #expect {
            try Pusher(package: package.root, target: s3.target, jobs: 1).run()
        } throws: { error in
            let error = OpsError.from(error)
            return error.location == "s3://\(s3.bucket)/live/pulse/assets/\(victim)" && error.message.contains("timed out")
                && error.message.contains("after 2 attempts")
        }
    }

    /// Item 6: a push killed halfway into a folder leaves `.tmp-*` files; the next push removes them.
    @Test func aRepushToAFolderRemovesTheTempFilesOfAKilledPush() throws {
        let package = try published()
        let temporary = try TestFolder("pulse-target")
        let folder = temporary.url.appendingPathComponent("cdn")
        #expect(runCLI(PushCommand.make, [package.root.path, "--to", folder.path]).code == 0)
        let leftovers = ["assets/.tmp-\(TestPackage.hash("x"))-1B2C", ".tmp-index.json-3D4E", "refs/.tmp-abc.json-5F6A"]
        for path in leftovers { try Data("half".utf8).write(to: folder.appendingPathComponent(path)) }
        let again = runCLI(PushCommand.make, [package.root.path, "--to", folder.path])
        #expect(again.code == 0, "\(again.err)")
        for path in leftovers { #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(path).path), "\(path)") }
    }
}

/// Issue 11.3: a mistyped target is a usage error, and a push into someone else's folder is refused.
@Suite(.serialized) struct PushTargetCheckTests {
    @Test func aMistypedOrUnsupportedSchemeIsAUsageErrorNotAFolder() throws {
        let package = try TestPackage()
        try package.publish(slides: ["scheme slide"])
        // Relative paths: a folder named `s3:` would appear in the current directory.
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let strays = ["s3:", "S3:", "gs:", "https:"].map { cwd.appendingPathComponent($0).path }
        #expect(strays.allSatisfy { !FileManager.default.fileExists(atPath: $0) })
        for target in ["s3:/pulse-test-bucket", "S3://pulse-test-bucket/p", "s3:pulse-test-bucket", "gs://pulse-test-bucket/p", "https://cdn.example.net/p"] {
            let result = runCLI(PushCommand.make, [package.root.path, "--to", target])
            #expect(result.code == 64, "\(target): \(result.err)")
            #expect(result.err.contains("not a supported target"), "\(result.err)")
            let gc = runCLI(GCCommand.make, [target])
            #expect(gc.code == 64, "\(target): \(gc.err)")
        }
        #expect(strays.allSatisfy { !FileManager.default.fileExists(atPath: $0) }, "no folder named s3:, S3:, gs: or https:")
    }

    @Test func aFolderHoldingSomethingElseIsRefused() throws {
        let package = try TestPackage()
        let temporary = try TestFolder("pulse-organizer")
        let folder = temporary.url
        try package.publish(slides: ["refuse slide"])
        try Data("%PDF-1.7".utf8).write(to: folder.appendingPathComponent("keynote.pdf"))
        try Data("{}".utf8).write(to: folder.appendingPathComponent("session.json"))
        let result = runCLI(PushCommand.make, [package.root.path, "--to", folder.path])
        #expect(result.code == 65)
        #expect(result.err.contains(folder.path) && result.err.contains("not a file of a pushed package"), "\(result.err)")
        #expect(try Set(FileManager.default.contentsOfDirectory(atPath: folder.path)) == ["keynote.pdf", "session.json"], "not even a lock file")

        // An empty folder, and a previous push target, are fine.
        let emptyFolder = try TestFolder("pulse-empty-target")
        let empty = emptyFolder.url
        #expect(runCLI(PushCommand.make, [package.root.path, "--to", empty.path]).code == 0)
        #expect(runCLI(PushCommand.make, [package.root.path, "--to", empty.path]).code == 0)
        #expect(runCLI(PushCommand.make, [package.root.path, "--to", folder.path, "--force"]).code == 0)
    }
}
