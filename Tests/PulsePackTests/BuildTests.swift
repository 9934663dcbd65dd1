import Foundation
import PulseAge
import PulseCore
import PulseCrypto
@testable import PulsePDF
import PulseStore
import PulseTestSupport
import Testing

@testable import PulsePack
@testable import PulsePackCLI

struct BuildTests {
    @Test func samplesBuildVerifyAndDecrypt() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = folder.appendingPathComponent("pkg")
        let report = try Support.build(Support.samples.appendingPathComponent("series.json"), out: out)
        #expect(report.sessions.map(\.id) == ["keynote", "workshop"])
        #expect(report.sessions.map(\.slides) == [14, 12])
        #expect(report.warnings.isEmpty, "\(report.warnings)")

        let verified = Verifier(package: out, keys: nil).run()
        #expect(verified.problems.isEmpty, "\(verified.problems)")
        #expect(verified.slidesDecrypted == 26)

        // Decrypt slide 0 by hand: the key table's key opens the blob into a one-page PDF.
        let package = PulsePackage(root: out)
        let table = try package.readKeyTable(at: package.keyTableURL(sessionId: "keynote", deckVersion: 1))
        let slide = try #require(table.slides.first)
        let blob = try Data(contentsOf: package.assets.url(for: slide.assetHash))
        #expect(Digest(of: blob) == slide.assetHash)
        let plaintext = try AES256GCM.open(
            blob, key: Array(try #require(Data(base64Encoded: slide.keyB64))),
            nonce: Array(try #require(Data(base64Encoded: slide.nonceB64))))
        #expect(try PDFDocument(bytes: plaintext, name: "slide0").pageCount == 1)
        #expect(!blob.starts(with: Array("%PDF".utf8)))
    }

    /// Same input, same package id and secret, and the clock pinned by SOURCE_DATE_EPOCH: two folders are
    /// byte-identical, and a rebuild into the same folder changes nothing.
    @Test func sameInputGivesByteIdenticalPackages() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let secret = try Support.secretFile(in: folder)
        let series = Support.samples.appendingPathComponent("series.json")
        let first = folder.appendingPathComponent("one"), second = folder.appendingPathComponent("two")
        let pinned = ["SOURCE_DATE_EPOCH": "1796392800"]
        try Support.build(series, out: first, secret: secret, packageId: Support.packageID, environment: pinned)
        try Support.build(series, out: second, secret: secret, packageId: Support.packageID, environment: pinned)
        let a = Support.snapshot(first), b = Support.snapshot(second)
        #expect(a.count > 30)
        #expect(a == b)
        #expect(String(decoding: try #require(a["server/index.json"]), as: UTF8.self).contains("\"publishedAt\": \"2026-12-04T14:00:00Z\""))
        // A rebuild into the same folder changes nothing either, whatever the clock says.
        try Support.build(series, out: first, secret: secret)
        #expect(Support.snapshot(first) == a)
    }

    /// However many threads read and seal (1 to more than there are slides; readers and sealers in every
    /// mix), the package is the same, byte for byte.
    @Test(.timeLimit(.minutes(2))) func threadCountDoesNotChangeThePackage() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let secret = try Support.secretFile(in: folder)
        let series = Support.samples.appendingPathComponent("series.json")
        var snapshots: [[String: Data]] = []
        for workers in [1, 2, 3, 5, 64] {
            let out = folder.appendingPathComponent("jobs-\(workers)")
            var options = Builder.Options(input: series, output: out, environment: Support.environment.merging(["SOURCE_DATE_EPOCH": "0"]) { $1 })
            options.secretFile = secret
            options.packageId = Support.packageID
            options.workers = workers
            try Builder(options: options).run()
            snapshots.append(Support.snapshot(out))
        }
        #expect(snapshots[0].count > 30)
        for snapshot in snapshots.dropFirst() { #expect(snapshot == snapshots[0]) }
    }

    @Test func pdfPagesAreDeterministic() throws {
        let bytes = Array(try Data(contentsOf: Support.keynotePDF))
        let one = try PDFDocument(bytes: bytes, name: "a"), two = try PDFDocument(bytes: bytes, name: "b")
        #expect(one.pageCount == 14)
        for n in [0, 7, 13] {
            let page = try one.page(n)
            #expect(page == (try two.page(n)))
            #expect(try PDFDocument(bytes: page, name: "page").pageCount == 1)
            // The file identifier is derived from the content, never qpdf's fixed placeholder.
            #expect(page.firstRange(of: Array("31415926535897932384626433832795".utf8)) == nil)
            let trailer = String(decoding: page.suffix(400), as: UTF8.self)
            #expect(trailer.contains("/ID[<"), "\(trailer)")
        }
    }

    @Test func replacingOneSlideMakesExactlyOneNewBlob() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let deck = try Support.copy(Support.keynoteImages, to: folder.appendingPathComponent("deck"))
        let session = try Support.sessionFile(in: folder, deck: deck)
        let out = folder.appendingPathComponent("pkg")
        let first = try Support.build(session, out: out)
        let v1 = try Support.manifest(out)
        #expect(first.sessions[0].deckVersion == 1)

        let unchanged = try Support.build(session, out: out)
        #expect(unchanged.sessions[0].newBlobs == 0)
        #expect(unchanged.sessions[0].deckVersion == 1)
        #expect(!unchanged.sessions[0].changed)

        let slide5 = deck.appendingPathComponent("slide5.png")
        let original = try Data(contentsOf: slide5)
        try FileManager.default.removeItem(at: slide5)
        try FileManager.default.copyItem(at: Support.samples.appendingPathComponent("decks/workshop-images/slide1.png"), to: slide5)
        let second = try Support.build(session, out: out)
        let v2 = try Support.manifest(out)
        #expect(second.sessions[0].newBlobs == 1)
        #expect(second.sessions[0].reusedBlobs == 13)
        #expect(second.sessions[0].deckVersion == 2)
        let plan = DeltaPlan(old: v1, new: v2)
        #expect(plan.fetch.count == 1)
        #expect(plan.drop.count == 1)
        #expect(plan.fetch[0].assetHash == v2["slides"]?.arrayValue?[4]["assetHash"]?.digestValue)
        #expect(plan.bytes == plan.fetch[0].bytes)

        // Going back to the old slide list still moves deckVersion forward, and reuses the old blob.
        try original.write(to: slide5)
        let third = try Support.build(session, out: out)
        #expect(third.sessions[0].deckVersion == 3)
        #expect(third.sessions[0].newBlobs == 0)
        #expect(try Support.manifest(out)["slides"] == v1["slides"])
    }

    @Test func imageFolderIsInNaturalOrder() {
        let names = ["slide10.png", "slide2.png", "slide1.png", "slide02b.png", "Slide3.png", "slide100.png"]
        // Case does not count, as in file managers (it did before issue 11: "Slide3" came first).
        #expect(names.sorted(by: naturalOrder) == ["slide1.png", "slide2.png", "slide02b.png", "Slide3.png", "slide10.png", "slide100.png"])
    }

    @Test func singleSessionRebuildUpdatesItsSeries() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = folder.appendingPathComponent("pkg")
        try Support.build(Support.samples.appendingPathComponent("series.json"), out: out)
        let package = PulsePackage(root: out)
        let before = try package.readIndex()
        let workshop = Support.samples.appendingPathComponent("sessions/workshop.json")
        let report = try Support.build(workshop, out: out, deck: Support.keynotePDF)
        let after = try package.readIndex()
        #expect(after.sessions["workshop"]?.packageVersion != before.sessions["workshop"]?.packageVersion)
        #expect(after.series["devconf-2026"]?.packageVersion != before.series["devconf-2026"]?.packageVersion)
        #expect(report.documents.map(\.kind) == [.series])
        let series = try package.readManifest(.series, id: "devconf-2026", packageVersion: after.series["devconf-2026"]!.packageVersion)
        let ref = series["sessions"]?.arrayValue?.first { $0["id"] == "workshop" }
        #expect(ref?["packageVersion"]?.stringValue == after.sessions["workshop"]?.packageVersion)
        #expect(Verifier(package: out, keys: nil).run().problems.isEmpty)
    }
}

struct SealedBuildTests {
    @Test func sealToWritesNoPlaintextKeyTable() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = folder.appendingPathComponent("pkg")
        let identity = try AgeIdentity.generate()
        var options = Builder.Options(input: Support.samples.appendingPathComponent("series.json"), output: out, environment: Support.environment)
        options.sealTo = [identity.recipient.description]
        options.environment = Support.environment
        try Builder(options: options).run()
        let keys = try FileManager.default.subpathsOfDirectory(atPath: out.appendingPathComponent("server/keys").path).filter { $0.contains(".json") }
        #expect(keys.sorted() == ["keynote/1.json.age", "workshop/1.json.age"])
        let sealed = Verifier(package: out, keys: nil, identities: [identity]).run()
        #expect(sealed.problems.isEmpty, "\(sealed.problems)")
        #expect(sealed.slidesDecrypted == 26)
        let withoutIdentity = Verifier(package: out, keys: nil).run()
        #expect(withoutIdentity.slidesDecrypted == 0 && withoutIdentity.notes.count == 2)
        #expect(Verifier(package: out, keys: nil, identities: [try AgeIdentity.generate()]).run().problems.count == 2)
    }

    /// A rebuild that changes the manifest but not the deck gives the key table the new packageVersion
    /// through a pending file. Killed between the commit and the rename, the next build finishes the job
    /// (for sealed tables too, which it cannot read) and removes a pending table the index does not name.
    @Test(arguments: [false, true]) func pendingKeyTableIsFinishedByTheNextBuild(sealed: Bool) throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = folder.appendingPathComponent("pkg")
        let secret = try Support.secretFile(in: folder)
        let identity = try AgeIdentity.generate()
        let session = try Support.sessionFile(in: folder, deck: Support.keynotePDF)
        let changed = try Support.sessionFile(
            in: folder, deck: Support.keynotePDF, agenda: #"[{ "start": "09:00", "durationMinutes": 10, "title": "Intro" }]"#)
        func build(_ input: URL) throws {
            var options = Builder.Options(input: input, output: out, environment: Support.environment)
            options.secretFile = secret
            if sealed { options.sealTo = [identity.recipient.description] }
            try Builder(options: options).run()
        }
        let package = PulsePackage(root: out)
        let table = sealed ? SealedKeyTable.url(in: package, sessionId: "talk", deckVersion: 1)
            : package.keyTableURL(sessionId: "talk", deckVersion: 1)
        func packageVersionInTable() throws -> String {
            let bytes = Array(try Data(contentsOf: table))
            return sealed ? try SealedKeyTable.open(bytes, identities: [identity]).packageVersion
                : try package.readKeyTable(at: table).packageVersion
        }
        func pendingFiles() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: table.deletingLastPathComponent().path).filter { $0.contains(".pending-") }
        }

        try build(session)
        let first = try package.readIndex().sessions["talk"]!.packageVersion
        let firstTable = try Data(contentsOf: table)
        try build(changed)
        let second = try package.readIndex().sessions["talk"]!
        #expect(second.deckVersion == 1 && second.packageVersion != first)
        #expect(try packageVersionInTable() == second.packageVersion)
        #expect(try pendingFiles().isEmpty)

        // As a kill right after the commit leaves it: the old table, the pending new one, and a stale pending file.
        let secondTable = try Data(contentsOf: table)
        try firstTable.write(to: table)
        try secondTable.write(to: URL(fileURLWithPath: table.path + ".pending-" + second.packageVersion))
        try firstTable.write(to: URL(fileURLWithPath: table.path + ".pending-" + first))
        try build(changed)
        #expect(try Data(contentsOf: table) == secondTable)
        #expect(try packageVersionInTable() == second.packageVersion)
        #expect(try pendingFiles().isEmpty)
    }

    @Test func badRecipientFailsBeforeAnyWork() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = folder.appendingPathComponent("pkg")
        let result = Support.cli(["build", Support.samples.appendingPathComponent("series.json").path, "--out", out.path, "--seal-to", "age1nope"])
        #expect(result.code == 65)
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }
}
