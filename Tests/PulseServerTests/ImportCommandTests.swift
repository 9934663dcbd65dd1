import Foundation
import PulseAge
import PulseCore
import PulseServer
import PulseTestSupport
import SyncTestSupport
import PulseServerStorage
@testable import PulseServerCLI
import PulseCommandLine
import Testing

@Suite struct ImportCommandTests {
    @Test func importsOnceReportsWhatChangedAndIsANoOpTheSecondTime() throws {
        let (package, identity) = try PackageReaderTests.sample()
        let data = package.root.appendingPathComponent("data").path
        let identityFile = package.root.appendingPathComponent("identity.txt")
        try Data(identity.fileContents().utf8).write(to: identityFile)

        let first = CLI.run(["import", "--data", data, package.root.path, "--identity", identityFile.path])
        #expect(first.code == 0, "\(first.text)")
        #expect(first.out == ["imported package \(package.packageId): sessions keynote (new, deckVersion 2), lab (new, deckVersion 1); series conf (new)"])
        let second = CLI.run(["import", "--data", data, package.root.path, "--identity", identityFile.path])
        #expect(second.out == ["package \(package.packageId): nothing changed (2 sessions, 1 series already current)"])

        let storage = try SQLiteStorage(path: data + "/pulse-server.sqlite")
        #expect(try storage.sessions().map(\.id) == ["keynote", "lab"])
        #expect(try storage.sessionContent(id: "lab")?.gated.count == 2)
        // Nothing printed holds key material.
        for slide in TestPackage.slides("keynote", deckVersion: 2, count: 5) {
            #expect(!(first.text + second.text).contains(Data(slide.key).base64EncodedString()))
        }
    }

    @Test func aNewerDeckBecomesCurrentAndJSONSaysSo() throws {
        let package = try TestPackage(packageId: TestContent.packageAID)
        try package.addSession("talk")
        try package.commit()
        let data = package.root.appendingPathComponent("data").path
        #expect(CLI.run(["import", "--data", data, package.root.path]).code == 0)
        try package.addSession("talk", deckVersion: 2, slides: 6, seed: "v2")
        try package.commit()
        let result = CLI.run(["import", "--data", data, package.root.path, "--json"])
        #expect(result.code == 0)
        let json = try JSONValue.parse(Data(result.out.joined(separator: "\n").utf8))
        #expect(json["changed"] == true)
        #expect(json["sessions"] == [["id": "talk", "outcome": "deck", "from": 1, "to": 2]])
        #expect(try SQLiteStorage(path: data + "/pulse-server.sqlite").session(id: "talk")?.deckVersion == 2)
    }

    @Test func otherKeysForTheSameDeckVersionAreRefusedWithOneLineAndNothingChanges() throws {
        let package = try TestPackage(packageId: TestContent.packageAID)
        try package.addSession("a")
        try package.addSession("talk")
        try package.commit()
        let data = package.root.appendingPathComponent("data").path
        #expect(CLI.run(["import", "--data", data, package.root.path]).code == 0)
        let storage = try SQLiteStorage(path: data + "/pulse-server.sqlite")
        let before = (try storage.sessions(), try storage.keyTable(sessionId: "talk", deckVersion: 1))

        // A rebuild from another secret: same deckVersion, other keys; "a" changes too and must not land.
        try package.addSession("a", note: "changed")
        try package.addSession("talk", seed: "other secret")
        try package.commit()
        let result = CLI.run(["import", "--data", data, package.root.path])
        #expect(result.code == 65)
        #expect(result.out.isEmpty)
        #expect(result.err == ["pulse-server: error: session talk deckVersion 1: the server holds other keys for this deck version (from package \(TestContent.packageA); this is package \(TestContent.packageA)); nothing imported"])
        #expect(try storage.sessions() == before.0)
        #expect(try storage.keyTable(sessionId: "talk", deckVersion: 1) == before.1)
    }

    @Test func anotherPackageIdNeedsReplacePackage() throws {
        let first = try TestPackage(packageId: TestContent.packageAID)
        try first.addSession("talk")
        try first.commit()
        let data = first.root.appendingPathComponent("data").path
        #expect(CLI.run(["import", "--data", data, first.root.path]).code == 0)
        let second = try TestPackage(packageId: TestContent.packageBID)
        try second.addSession("talk", seed: "b")
        try second.commit()
        let refused = CLI.run(["import", "--data", data, second.root.path])
        #expect(refused.code == 65)
        #expect(refused.err.first?.contains("session talk was imported from package \(TestContent.packageA), this is package \(TestContent.packageB)") == true)
        let replaced = CLI.run(["import", "--data", data, second.root.path, "--replace-package"])
        #expect(replaced.code == 0, "\(replaced.text)")
        #expect(replaced.out == ["imported package \(TestContent.packageB): sessions talk (new manifest, same deck)"])
    }

    @Test func badPackagesAndIdentitiesExit65WithOneLine() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let missing = CLI.run(["import", "--data", data, folder.url.path])
        #expect(missing.code == 65 && missing.err == ["pulse-server: error: \(folder.url.path): not a package's server part (no server/index.json or index.json)"])
        // The package is read before the data folder is touched.
        #expect(!FileManager.default.fileExists(atPath: data))

        let identity = folder.url.appendingPathComponent("identity.txt")
        try Data("AGE-SECRET-KEY-1NOPE\n".utf8).write(to: identity)
        let badIdentity = CLI.run(["import", "--data", data, folder.url.path, "--identity", identity.path])
        #expect(badIdentity.code == 65 && badIdentity.err.count == 1 && badIdentity.err[0].contains("identity.txt line 1"))
        #expect(!badIdentity.err[0].contains("NOPE"))

        let usage = CLI.run(["import", folder.url.path])
        #expect(usage.code == 64 && usage.err.first == "pulse-server: error: import: missing --data <dir> (or --database <url>, or PULSE_DATABASE_URL)")
    }
}
