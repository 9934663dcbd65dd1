import Foundation
import PulseCore
import PulseStore
import PulseTestSupport
import Testing

@testable import PulsePack

/// `build` on a `pulse-package/1` folder moves it to the current layout in place (Tests/Fixtures/package-v1,
/// written by the pulse-pack of that layout; Tests/Fixtures/package-v1-input/README.md says how).
struct MigrationTests {
    static let fixture = Support.fixtures.appendingPathComponent("package-v1")
    static let secretText = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n"
    /// The fixture's session manifests: the current one (title "Test talk, revised") and the first.
    static let currentTalk = "8985a3f540a04b56101f48f64d2576e4ad9bf263abb757c4ee0378f7cc42eda4"
    static let firstTalk = "5a458d44a17aed51c97930be62090e7b432143d8d077edf5b65595a693218088"

    /// A copy of the fixture with the file times of a real package: the first version an hour before the current one.
    static func copyFixture(to folder: URL) throws -> URL {
        let out = folder.appendingPathComponent("pkg")
        try FileManager.default.copyItem(at: fixture, to: out)
        chmod(out.appendingPathComponent("secret").path, 0o600)
        let base = Date(timeIntervalSince1970: 1_796_000_000)
        for file in PulsePackage(root: out).manifestFilesOfTheOldLayout() {
            let isFirst = file.hasSuffix("\(firstTalk).json") || file.hasSuffix("8d5323822b177050973ff15840149036c77ee9b94f7989dd254399510f96ab4c.json")
            try FileManager.default.setAttributes([.modificationDate: base.addingTimeInterval(isFirst ? 0 : 3600)], ofItemAtPath: file)
        }
        return out
    }

    /// The environment of one run: its own config folder, so where the secret went can be checked.
    static func environment(_ folder: URL) -> [String: String] {
        ["XDG_CONFIG_HOME": folder.appendingPathComponent("config").path, "SOURCE_DATE_EPOCH": "1796400000"]
    }

    @Test func buildMovesAPulsePackage1FolderToTheCurrentLayout() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = try Self.copyFixture(to: folder)
        let session = try Support.sessionFile(in: folder, deck: Support.fixtures.appendingPathComponent("pdf/links.pdf"))
        let report = try Support.build(session, out: out, packageId: Support.packageID, environment: Self.environment(folder))
        #expect(report.migrated == Support.packageID)

        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted() == [".lock", "public", "server"])
        let home = try #require(PackageSecret.defaultURL(packageId: Support.packageID, environment: Self.environment(folder)))
        #expect(try String(contentsOf: home, encoding: .utf8) == Self.secretText, "the package's secret moved to its home")
        #expect(try FileManager.default.attributesOfItem(atPath: home.path)[.posixPermissions] as? Int == 0o600)
        #expect(report.secret == home.path && !report.secretCreated)

        let package = PulsePackage(root: out)
        let index = try package.readIndex()
        #expect(index.packageId == Support.packageID)
        // The key derivation now binds the package and session: every slide is new, deckVersion moves on.
        #expect(index.sessions["talk"]?.deckVersion == 2 && index.sessions["talk"]?.highestDeckVersion == 2)
        #expect(report.sessions[0].newBlobs == 3)
        let history = index.versions(.sessions, "talk")
        #expect(history.map(\.packageVersion) == [report.sessions[0].packageVersion, Self.currentTalk, Self.firstTalk])
        #expect(history.map(\.publishedAt) == ["2026-12-04T16:00:00Z", "2026-11-30T01:53:20Z", "2026-11-30T00:53:20Z"])
        #expect(index.versions(.series, "fixture-series").count == 3, "the series follows its session; both old versions stay")
        #expect(index.versions(.appconfig, "acme").count == 1)
        // Old versions stay usable: their manifests, blobs and key table are where the new layout puts them.
        #expect(FileManager.default.fileExists(atPath: package.manifestURL(.sessions, id: "talk", packageVersion: Self.firstTalk).path))
        #expect(FileManager.default.fileExists(atPath: package.keyTableURL(sessionId: "talk", deckVersion: 1).path))
        #expect(try FileManager.default.attributesOfItem(atPath: package.keysFolder.path)[.posixPermissions] as? Int == 0o700)
        let verified = Verifier(package: out, keys: nil, environment: Self.environment(folder)).run()
        #expect(verified.problems.isEmpty, "\(verified.problems)")
        #expect(verified.slidesDecrypted == 3)
    }

    /// A migration stopped after any of its steps (as a crash or `kill -9` there would) loses nothing,
    /// and the next build finishes it: the package is then exactly what an uninterrupted one gives.
    @Test(arguments: 1...13) func aMigrationStoppedAfterAnyStepIsFinishedByTheNextBuild(step: Int) throws {
        struct Stop: Error {}
        let referenceFolder = try TestFolder("reference-\(step)")
        let reference = referenceFolder.url
        let referenceOut = try Self.copyFixture(to: reference)
        let deck = Support.fixtures.appendingPathComponent("pdf/links.pdf")
        try Support.build(try Support.sessionFile(in: reference, deck: deck), out: referenceOut, packageId: Support.packageID,
                          environment: Self.environment(reference))

        let temporary = try TestFolder("stopped-\(step)")

        let folder = temporary.url
        let out = try Self.copyFixture(to: folder)
        // The old index.json goes once the new indexes are written (step 12); every other file stays.
        let oldIndex = try Data(contentsOf: Self.fixture.appendingPathComponent("index.json"))
        let fixtureFiles = Set(Support.snapshot(Self.fixture).values).subtracting(step >= 12 ? [oldIndex] : [])
        var migration = PackageMigration(package: PulsePackage(root: out), packageId: Support.packageID,
                                         environment: Support.environment.merging(Self.environment(folder)) { $1 })
        migration.afterStep = { if $0 == step { throw Stop() } }
        #expect(throws: Stop.self) { try migration.run() }
        // Nothing is lost at that moment: every file of the old package is somewhere (the secret in its home).
        var present = Set(Support.snapshot(out).values)
        let home = PackageSecret.defaultURL(packageId: Support.packageID, environment: Self.environment(folder))!
        if let secret = FileManager.default.contents(atPath: home.path) { present.insert(secret) }
        #expect(fixtureFiles.subtracting(present).isEmpty, "files missing after step \(step)")
        #expect(try PackageMigration.isNeeded(PulsePackage(root: out)) == (step < 13))

        try Support.build(try Support.sessionFile(in: folder, deck: deck), out: out, packageId: Support.packageID,
                          environment: Self.environment(folder))
        #expect(Support.snapshot(out) == Support.snapshot(referenceOut), "after a stop at step \(step)")
        #expect(try String(contentsOf: home, encoding: .utf8) == Self.secretText)
    }

    /// Commands that do not migrate say what to run, in one line.
    @Test func verifyPushAndGcNameTheCommandThatMigrates() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = try Self.copyFixture(to: folder)
        let before = Support.snapshot(out)
        let verify = Support.cli(["verify", out.path])
        #expect(verify.code == 65, "not a package of this layout: bad input, as for push and gc")
        #expect(verify.err.count == 1 && verify.err[0].contains("pulse-package/1") && verify.err[0].contains("run pulse-pack build"), "\(verify.err)")
        for command in [["push", out.path, "--to", folder.appendingPathComponent("cdn").path], ["gc", out.path]] {
            let result = try Support.executable(command)
            #expect(result.code == 65, "\(command[0])")
            #expect(result.err.count == 1 && result.err[0].contains("run pulse-pack build"), "\(command[0]): \(result.err)")
        }
        #expect(Support.snapshot(out) == before)
    }
}

extension PulsePackage {
    /// The manifest files of a `pulse-package/1` folder (sessions/, series/, appconfig/ at the top).
    func manifestFilesOfTheOldLayout() -> [String] {
        let manager = FileManager.default
        return ["sessions", "series", "appconfig"].flatMap { kind in
            ((try? manager.subpathsOfDirectory(atPath: root.appendingPathComponent(kind).path)) ?? [])
                .filter { $0.hasSuffix(".json") }.map { root.appendingPathComponent(kind).appendingPathComponent($0).path }
        }
    }
}
