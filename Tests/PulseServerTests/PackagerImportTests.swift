import Foundation
import PulseAge
import PulseCore
import PulseCrypto
import PulsePack
import PulseServer
import PulseTestSupport
import SyncTestSupport
import PulseServerStorage
import PulseSyncAPI
import Testing

/// The importer against what the real packager writes: the bundled samples built with sealed key
/// tables, imported, and every stored key opening its slide's blob.
@Suite struct PackagerImportTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Samples").standardizedFileURL

    @Test func everyImportedKeyOpensItsSlideAndGatedResourcesReleaseByTheRules() throws {
        let folder = try TestFolder()
        let identity = try AgeIdentity.generate()
        let identityFile = folder.url.appendingPathComponent("identity.txt")
        try Data(identity.fileContents().utf8).write(to: identityFile)
        let package = folder.url.appendingPathComponent("pkg")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = folder.url.appendingPathComponent("config").path
        environment["PULSE_PACKAGE_SECRET"] = nil
        var options = Builder.Options(
            input: Self.samples.appendingPathComponent("series.json"), output: package,
            secretFile: folder.url.appendingPathComponent("secret.b64"), environment: environment)
        options.sealTo = [identity.recipient.description]
        _ = try Builder(options: options).run()

        let data = folder.url.appendingPathComponent("data").path
        let imported = CLI.run(["import", "--data", data, package.path, "--identity", identityFile.path])
        #expect(imported.code == 0, "\(imported.text)")
        let storage = try SQLiteStorage(path: data + "/" + DataFolder.databaseName)
        let sessions = try storage.sessions()
        #expect(sessions.count >= 2)
        var opened = 0
        for session in sessions {
            let table = try #require(try storage.keyTable(sessionId: session.id, deckVersion: session.deckVersion))
            #expect(table.slides.count == session.slideCount && session.slideCount > 0)
            for slide in table.slides {
                let blob = try Data(contentsOf: package.appendingPathComponent("public/assets/\(slide.assetHash)"))
                let plaintext = try AES256GCM.open(
                    blob, key: Array(Data(base64Encoded: slide.keyB64)!), nonce: Array(Data(base64Encoded: slide.nonceB64)!))
                let magic = Array(plaintext.prefix(4))
                #expect(magic == Array("%PDF".utf8) || magic == [0x89, 0x50, 0x4e, 0x47] || magic.prefix(3) == [0xff, 0xd8, 0xff] || magic == Array("RIFF".utf8))
                opened += 1
            }
        }
        #expect(opened == sessions.reduce(0) { $0 + $1.slideCount })

        // A gated resource of the sample keynote shows its full entry once the live frontier reaches it.
        let keynote = try #require(try storage.sessionContent(id: "keynote"))
        let gated = try #require(keynote.gated.first { $0.rule.releaseAfterSlide != nil })
        let slide = try #require(gated.rule.releaseAfterSlide)
        var record = try #require(try storage.updateSession(id: "keynote", SessionUpdate(state: .live, maxShown: slide - 1), at: 1000))
        #expect(!ManifestView.releasedResources(keynote, session: record, now: 1000).contains(gated.id))
        record = try #require(try storage.updateSession(id: "keynote", SessionUpdate(maxShown: slide), at: 1001))
        let released = ManifestView.releasedResources(keynote, session: record, now: 1001)
        #expect(released.contains(gated.id))
        let view = try ManifestView.session(keynote, released: released)
        #expect(view.packageVersion != keynote.packageVersion)
        let resources = try JSONValue.parse(Data(view.body))["resources"]?.arrayValue ?? []
        #expect(resources.contains { $0 == gated.entry })

        // The same package again changes nothing.
        #expect(CLI.run(["import", "--data", data, package.path, "--identity", identityFile.path]).out.first?.contains("nothing changed") == true)
    }
}
