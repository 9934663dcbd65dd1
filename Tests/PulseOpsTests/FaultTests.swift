import Foundation
import PulseStore
import Synchronization
import PulseTestSupport
import Testing
@testable import PulseOps
@testable import PulseOpsCLI

/// Bad input and faults: each gives one clear line naming what and where, the documented exit code,
/// and nothing half-published (no index.json, no manifest on the target).
@Suite(.serialized) struct FaultTests {
    static let slides = ["fault slide 1", "fault slide 2"]

    func publishedPackage() throws -> TestPackage {
        let package = try TestPackage()
        try package.publish(slides: Self.slides)
        return package
    }

    @Test func unreachableEndpoint() throws {
        let package = try publishedPackage()
        let result = runCLI(PushCommand.make, [package.root.path, "--to", "s3://bucket/x", "--endpoint", "http://127.0.0.1:1", "--retries", "1"],
                            variables: ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "never-printed-secret"])
        #expect(result.code == 1)
        #expect(result.err == "pulse-pack: error: http://127.0.0.1:1: cannot reach the S3 endpoint (connection refused) after 2 attempts\n", "\(result.err)")
        #expect(!result.err.contains("never-printed-secret"))
    }

    @Test func wrongSecretKey() throws {
        let moto = try MotoServer.require()
        let bucket = try moto.makeBucket()
        let package = try publishedPackage()
        let wrongSecret = "wrong-\(moto.credentials.secretAccessKey)"
        let result = runCLI(PushCommand.make, [package.root.path, "--to", "s3://\(bucket)/p", "--endpoint", moto.endpoint.absoluteString],
                            variables: ["AWS_ACCESS_KEY_ID": moto.credentials.accessKeyId, "AWS_SECRET_ACCESS_KEY": wrongSecret])
        #expect(result.code == 1)
        #expect(result.err.split(separator: "\n").count == 1)
        #expect(result.err.contains("s3://\(bucket)") && result.err.contains("SignatureDoesNotMatch"), "\(result.err)")
        #expect(!result.err.contains(wrongSecret) && !result.err.contains(moto.credentials.secretAccessKey))
        #expect(try moto.client(bucket: bucket).list(prefix: "").isEmpty)
    }

    @Test func missingBucket() throws {
        let moto = try MotoServer.require()
        let package = try publishedPackage()
        let result = runCLI(PushCommand.make, [package.root.path, "--to", "s3://no-such-bucket-here/p", "--endpoint", moto.endpoint.absoluteString],
                            variables: ["AWS_ACCESS_KEY_ID": moto.credentials.accessKeyId, "AWS_SECRET_ACCESS_KEY": moto.credentials.secretAccessKey])
        #expect(result.code == 1)
        #expect(result.err == "pulse-pack: error: s3://no-such-bucket-here: no such bucket at \(moto.endpoint.absoluteString)\n", "\(result.err)")
    }

    @Test func credentialsFromANamedProfile() throws {
        let moto = try MotoServer.require()
        let bucket = try moto.makeBucket()
        let package = try publishedPackage()
        let homeFolder = try TestFolder("pulse-home")
        let home = homeFolder.url
        try FileManager.default.createDirectory(at: home.appendingPathComponent(".aws"), withIntermediateDirectories: true)
        try """
            [default]
            aws_access_key_id = AKIDWRONG
            aws_secret_access_key = wrong

            [pulse]
            aws_access_key_id = \(moto.credentials.accessKeyId)
            aws_secret_access_key = \(moto.credentials.secretAccessKey)
            """.write(to: home.appendingPathComponent(".aws/credentials"), atomically: true, encoding: .utf8)
        let arguments = [package.root.path, "--to", "s3://\(bucket)", "--endpoint", moto.endpoint.absoluteString, "--retries", "0"]
        let viaDefault = runCLI(PushCommand.make, arguments, home: home.path)
        #expect(viaDefault.code == 1, "the default profile's key is unknown to moto")
        let viaFlag = runCLI(PushCommand.make, arguments + ["--profile", "pulse"], home: home.path)
        #expect(viaFlag.code == 0, "\(viaFlag.err)")
        let viaVariable = runCLI(PushCommand.make, arguments, variables: ["AWS_PROFILE": "pulse"], home: home.path)
        #expect(viaVariable.code == 0, "\(viaVariable.err)")
        let missing = runCLI(PushCommand.make, arguments + ["--profile", "nope"], home: home.path)
        #expect(missing.code == 64)
        #expect(missing.err.contains("[nope]"))
    }

    @Test func readOnlyTargetFolder() throws {
        let package = try publishedPackage()
        // root ignores permission bits, so as root use a folder the kernel refuses to create files in.
        let parentFolder = try TestFolder("pulse-ro")
        let parent = parentFolder.url
        defer { chmod(parent.path, 0o755) }
        let target = geteuid() == 0 ? URL(fileURLWithPath: "/sys/pulse-push-test/cdn") : parent.appendingPathComponent("cdn")
        if geteuid() != 0 { chmod(parent.path, 0o555) }
        let result = runCLI(PushCommand.make, [package.root.path, "--to", target.path])
        #expect(result.code == 1)
        #expect(result.err.split(separator: "\n").count == 1)
        #expect(result.err.contains(target.deletingLastPathComponent().path) && (result.err.contains("not permitted") || result.err.contains("denied") || result.err.contains("Read-only")), "\(result.err)")
    }

    @Test func fullTargetFolderPublishesNoManifestAndNoIndex() throws {
        let package = try publishedPackage()
        let temporary = try TestFolder("pulse-full")
        let folder = temporary.url
        let written = Synchronization.Mutex(0)
        // The disk fills after one blob: the writer reports ENOSPC as AtomicFile would.
        let target = FolderTarget(root: folder) { data, url, mode in
            let count = written.withLock { $0 += 1; return $0 }
            guard count <= 1 else { throw StoreError.system(url.path, "cannot write", errno: ENOSPC) }
            try AtomicFile.write(data, to: url, mode: mode)
        }
        #expect {
            try Pusher(package: package.root, target: target, jobs: 1).run()
        } throws: { error in
            let error = OpsError.from(error)
            return error.exitCode == 1 && error.description.contains("No space left on device") && error.description.contains(folder.path)
        }
        let names = try FolderTarget(root: folder).list(under: "").map(\.path).filter { !leaseFiles.contains($0) }
        #expect(names.count == 1 && names[0].hasPrefix("assets/"), "\(names)")
    }

    @Test func notAPackage() throws {
        let temporary = try TestFolder("pulse-empty")
        let folder = temporary.url
        let targetFolder = try TestFolder("pulse-target")
        let target = targetFolder.url
        let result = runCLI(PushCommand.make, [folder.path, "--to", target.path])
        #expect(result.code == 65)
        #expect(result.err == "pulse-pack: error: \(folder.path): not a pulse package (no public/index.json)\n")
    }

    @Test func aMissingBlobAnEditedBlobListAndAnEditedAppConfigAreBadInput() throws {
        let package = try publishedPackage()
        let targetFolder = try TestFolder("pulse-target")
        let target = targetFolder.url
        let blob = package.package.assets.url(for: TestPackage.hash(Self.slides[0]))
        try FileManager.default.removeItem(at: blob)
        let missing = runCLI(PushCommand.make, [package.root.path, "--to", target.path])
        #expect(missing.code == 65)
        #expect(missing.err == "pulse-pack: error: \(blob.path): missing blob (a blob list names it)\n")

        func edit(_ url: URL) throws {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
            try Data(String(decoding: try Data(contentsOf: url), as: UTF8.self).replacingOccurrences(of: "acme", with: "acne").utf8).write(to: url)
        }
        try package.publish(slides: Self.slides)
        let config = package.package.manifestURL(.appconfig, id: "acme", packageVersion: try package.package.readIndex().appconfig["acme"]!.packageVersion)
        let original = try Data(contentsOf: config)
        try edit(config)
        let editedConfig = runCLI(PushCommand.make, [package.root.path, "--to", target.path])
        #expect(editedConfig.code == 65)
        #expect(editedConfig.err.contains(config.path) && editedConfig.err.contains("packageVersion"), "\(editedConfig.err)")

        try original.write(to: config)
        let list = package.root.appendingPathComponent("public/" + TestPackage.refs(Self.slides))
        try Data(String(decoding: try Data(contentsOf: list), as: UTF8.self).replacingOccurrences(of: "\"bytes\": 13", with: "\"bytes\": 14").utf8)
            .write(to: list)
        let editedList = runCLI(PushCommand.make, [package.root.path, "--to", target.path])
        #expect(editedList.code == 65)
        #expect(editedList.err.contains(list.path) && editedList.err.contains("do not hash to its name"), "\(editedList.err)")
        #expect(try FolderTarget(root: target).list(under: "").filter { !$0.path.hasPrefix("assets/") }.isEmpty)
    }

    @Test func usageErrors() throws {
        let package = try publishedPackage()
        #expect(runCLI(PushCommand.make, [package.root.path]).code == 64)
        #expect(runCLI(PushCommand.make, [package.root.path, "--to", "/tmp/x", "--endpoint", "http://h"]).code == 64)
        #expect(runCLI(PushCommand.make, [package.root.path, "--to", "s3://"]).code == 64)
        #expect(runCLI(PushCommand.make, [package.root.path, "--to", "s3://b", "--endpoint", "ftp://h"],
                       variables: ["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"]).code == 64)
        let noCredentials = runCLI(PushCommand.make, [package.root.path, "--to", "s3://b"])
        #expect(noCredentials.code == 64)
        #expect(noCredentials.err.contains("no AWS credentials"))
        #expect(runCLI(PushCommand.make, [package.root.path, "--to", "/tmp/x", "--jobs", "0"]).code == 64)
        #expect(runCLI(GCCommand.make, [package.root.path, "--keep", "0"]).code == 64)
    }
}

/// Credentials lookup and that a secret never shows.
struct CredentialsTests {
    @Test func environmentThenProfileFile() throws {
        let homeFolder = try TestFolder("pulse-home")
        let home = homeFolder.url
        try FileManager.default.createDirectory(at: home.appendingPathComponent(".aws"), withIntermediateDirectories: true)
        try "# comment\n[default]\naws_access_key_id=AKIDDEFAULT\naws_secret_access_key = s1\n[profile other]\naws_access_key_id = AKIDOTHER\naws_secret_access_key = s2\naws_session_token = t2\n"
            .write(to: home.appendingPathComponent(".aws/credentials"), atomically: true, encoding: .utf8)
        let fromEnvironment = try AWSCredentials.resolve(profile: nil, environment: ["AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "s0"], home: home.path)
        #expect(fromEnvironment == AWSCredentials(accessKeyId: "AKIDENV", secretAccessKey: "s0"))
        #expect(try AWSCredentials.resolve(profile: nil, environment: [:], home: home.path).accessKeyId == "AKIDDEFAULT")
        #expect(try AWSCredentials.resolve(profile: "other", environment: ["AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "s0"], home: home.path)
            == AWSCredentials(accessKeyId: "AKIDOTHER", secretAccessKey: "s2", sessionToken: "t2"))
        #expect(try AWSCredentials.resolve(profile: nil, environment: ["AWS_PROFILE": "other"], home: home.path).accessKeyId == "AKIDOTHER")
        #expect(throws: OpsError.self) { try AWSCredentials.resolve(profile: nil, environment: ["AWS_ACCESS_KEY_ID": "AKIDENV"], home: home.path) }
        #expect(!"\(fromEnvironment)".contains("s0"))
    }
}
