import Foundation
import PulseCore
import PulseStore
import PulseTestSupport
import Testing

@testable import PulsePack

struct VerifyTests {
    /// Each test's folder (swift-testing makes a fresh suite value per test), removed after it.
    let folder: TestFolder

    init() throws { folder = try TestFolder() }

    /// A fresh sample package.
    func package() throws -> (URL, PulsePackage) {
        let out = folder.url.appendingPathComponent("pkg")
        try Support.build(Support.samples.appendingPathComponent("series.json"), out: out)
        return (out, PulsePackage(root: out))
    }

    func replace(_ url: URL, with bytes: [UInt8]) throws {
        try FileManager.default.removeItem(at: url)
        try Data(bytes).write(to: url)
    }

    @Test func reportsEveryProblemNotOnlyTheFirst() throws {
        let (out, package) = try package()
        let index = try package.readIndex()
        let manifest = try package.readManifest(.sessions, id: "keynote", packageVersion: index.sessions["keynote"]!.packageVersion)
        let slides = try #require(manifest["slides"]?.arrayValue)
        let first = try #require(slides[0]["assetHash"]?.digestValue)
        let second = try #require(slides[1]["assetHash"]?.digestValue)

        // 1. flip one bit of a blob; 2. delete another; 3. edit a manifest by hand.
        var bytes = Array(try Data(contentsOf: package.assets.url(for: first)))
        bytes[bytes.count / 2] ^= 0x01
        try replace(package.assets.url(for: first), with: bytes)
        try FileManager.default.removeItem(at: package.assets.url(for: second))
        let seriesURL = package.manifestURL(.series, id: "devconf-2026", packageVersion: index.series["devconf-2026"]!.packageVersion)
        let edited = try String(contentsOf: seriesURL, encoding: .utf8).replacingOccurrences(of: "DevConf", with: "DevCon")
        try replace(seriesURL, with: Array(edited.utf8))

        let report = Verifier(package: out, keys: nil).run()
        #expect(report.problems.contains { $0.contains(first.hex) && $0.contains("do not hash to its name") })
        #expect(report.problems.contains { $0.contains(second.hex) && $0.contains("missing") })
        #expect(report.problems.contains { $0.contains(seriesURL.path) && $0.contains("packageVersion does not match") })
        #expect(report.problems.count >= 4, "\(report.problems)")  // the damaged blob is also a bad reference

        let result = Support.cli(["verify", out.path])
        #expect(result.code == 1)
        #expect(result.out.last?.hasPrefix("FAILED") == true)
    }

    /// A manifest edited to name a path instead of a blob: reported, never opened as a file of the store.
    @Test func anAssetHashThatIsNotABlobNameIsAProblem() throws {
        let (out, package) = try package()
        let index = try package.readIndex()
        let url = package.manifestURL(.sessions, id: "keynote", packageVersion: index.sessions["keynote"]!.packageVersion)
        let manifest = try package.readManifest(.sessions, id: "keynote", packageVersion: index.sessions["keynote"]!.packageVersion)
        let first = try #require(manifest["slides"]?.arrayValue?.first?["assetHash"]?.stringValue)
        let edited = try String(contentsOf: url, encoding: .utf8).replacingOccurrences(of: first, with: "../../server/keys")
        try replace(url, with: Array(edited.utf8))
        let report = Verifier(package: out, keys: nil).run()
        #expect(report.problems.contains { $0.contains("assetHash \"../../server/keys\" is not a blob name") }, "\(report.problems)")
    }

    @Test func wrongKeyOrDamagedSlideIsCaughtByDecryption() throws {
        let (out, package) = try package()
        let url = package.keyTableURL(sessionId: "workshop", deckVersion: 1)
        var table = try package.readKeyTable(at: url)
        table.slides[3].keyB64 = table.slides[4].keyB64
        try FileManager.default.removeItem(at: url)
        try package.writeKeyTable(table)
        let report = Verifier(package: out, keys: nil).run()
        #expect(report.problems == ["session workshop slide 3: does not decrypt with its key (blob \(String(table.slides[3].assetHash.hex.prefix(12))))"])
    }

    @Test func checkPlaintextAcceptsOnlyOnePagePDFsAndWholeImages() throws {
        let three = Array(try Data(contentsOf: Support.fixtures.appendingPathComponent("pdf/three-pages.pdf")))
        #expect(Verifier.checkPlaintext(three) == "decrypted PDF has 3 pages, expected 1")
        let png = Array(try Data(contentsOf: Support.keynoteImages.appendingPathComponent("slide1.png")))
        #expect(Verifier.checkPlaintext(png) == nil)
        #expect(Verifier.checkPlaintext(Array(png.dropLast(20))) != nil)
        #expect(Verifier.checkPlaintext(Array("hello".utf8)) != nil)
    }

    /// Nothing device-scoped in public/, and no secret in the package folder.
    @Test func aManifestInPublicAndASecretInTheFolderAreProblems() throws {
        let (out, package) = try package()
        let index = try package.readIndex()
        let manifest = package.manifestURL(.sessions, id: "keynote", packageVersion: index.sessions["keynote"]!.packageVersion)
        let leaked = package.publicRoot.appendingPathComponent("sessions/keynote/\(manifest.lastPathComponent)")
        try FileManager.default.createDirectory(at: leaked.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: manifest, to: leaked)
        try FileManager.default.copyItem(at: try Support.secretURL(out), to: package.legacySecretURL)
        let report = Verifier(package: out, keys: nil).run()
        #expect(report.problems.contains { $0.hasPrefix(leaked.path) && $0.contains("does not belong in public/") }, "\(report.problems)")
        #expect(report.problems.contains { $0.hasPrefix(package.legacySecretURL.path) && $0.contains("inside the package folder") })
        #expect(report.problems.count == 2, "\(report.problems)")
        let build = Support.cli(["build", Support.samples.appendingPathComponent("series.json").path, "--out", out.path, "--quiet"])
        #expect(build.code == 0)
        #expect(build.err.contains { $0.contains("warning") && $0.contains("inside the package folder") }, "\(build.err)")
    }

    @Test func notAPackage() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let report = Verifier(package: folder, keys: nil).run()
        #expect(report.problems == ["\(folder.path): not a pulse package (no server/index.json)"])
    }
}

struct DiffCommandTests {
    @Test func printsFetchDropAndBytes() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let old = folder.appendingPathComponent("old.json"), new = folder.appendingPathComponent("new.json")
        let a = String(repeating: "a", count: 64), b = String(repeating: "b", count: 64), c = String(repeating: "c", count: 64)
        let oldManifest: JSONValue = ["slides": [["n": 0, "assetHash": .string(a), "bytes": 10], ["n": 1, "assetHash": .string(b), "bytes": 20]]]
        let newManifest: JSONValue = ["slides": [["n": 0, "assetHash": .string(a), "bytes": 10], ["n": 1, "assetHash": .string(c), "bytes": 30]]]
        try Data(PackageVersion.stamped(oldManifest).manifest.prettyBytes).write(to: old)
        try Data(PackageVersion.stamped(newManifest).manifest.prettyBytes).write(to: new)

        let human = Support.cli(["diff", old.path, new.path])
        #expect(human.code == 0)
        #expect(human.out == ["slide 2 changed", "+ \(c)  30 B", "- \(b)  20 B", "fetch 1, drop 1, keep 1; download 30 B (30 bytes)"])

        let json = Support.cli(["diff", old.path, new.path, "--json"])
        let plan = try JSONValue.parse(Data(json.out.joined(separator: "\n").utf8))
        #expect(plan["bytesToDownload"] == 30)
        #expect(plan["fetch"]?.arrayValue?.map { $0["assetHash"] } == [.string(c)])
        #expect(plan["drop"]?.arrayValue?.map { $0["assetHash"] } == [.string(b)])
        #expect(plan["unchanged"] == false)
        #expect(plan["slides"] == ["changed": [1], "added": [], "removed": []])

        #expect(Support.cli(["diff", old.path, old.path]).out == ["unchanged: same packageVersion (the app gets a 304 and fetches nothing)"])
        #expect(Support.cli(["diff", old.path, folder.appendingPathComponent("nope.json").path]).code == 65)
    }

    /// `--package P --session S`: the session's previous version against its current one, from server/.
    @Test func comparesASessionsTwoNewestVersionsInAPackage() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let deck = try Support.copy(Support.keynoteImages, to: folder.appendingPathComponent("deck"))
        let session = try Support.sessionFile(in: folder, deck: deck)
        let out = folder.appendingPathComponent("pkg")
        try Support.build(session, out: out)
        let single = Support.cli(["diff", "--package", out.path, "--session", "talk"])
        #expect(single.code == 65 && single.err.first?.contains("one version only") == true, "\(single.err)")
        try FileManager.default.removeItem(at: deck.appendingPathComponent("slide5.png"))
        try FileManager.default.copyItem(at: Support.samples.appendingPathComponent("decks/workshop-images/slide1.png"), to: deck.appendingPathComponent("slide5.png"))
        try Support.build(session, out: out)
        let result = Support.cli(["diff", "--package", out.path, "--session", "talk", "--json"])
        #expect(result.code == 0, "\(result.err)")
        let plan = try JSONValue.parse(Data(result.out.joined(separator: "\n").utf8))
        #expect(plan["fetch"]?.arrayValue?.count == 1 && plan["drop"]?.arrayValue?.count == 1)
        #expect(Support.cli(["diff", "--package", out.path]).code == 64)
        #expect(Support.cli(["diff", "--package", out.path, "--session", "nobody"]).code == 65)
        // The positional form is the same comparison.
        let positional = Support.cli(["diff", out.path, "talk", "--json"])
        #expect(positional.out == result.out)
        let human = Support.cli(["diff", out.path, "talk"])
        #expect(human.out.first == "slide 5 changed", "\(human.out)")
        let typo = Support.cli(["diff", out.path, "tlak"])
        #expect(typo.code == 65)
        #expect(typo.err.first?.hasSuffix(#"history.sessions/tlak: no such session in the package; did you mean "talk"? (sessions: talk)"#) == true, "\(typo.err)")
    }

    func manifest(_ fields: JSONValue, in folder: URL, _ name: String) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try Data(PackageVersion.stamped(fields).manifest.prettyBytes).write(to: url)
        return url
    }

    /// Slide numbers in runs, from 1 like the deck's pages.
    @Test func slideNumbersAreGroupedInRuns() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let slides = { (hashes: [String]) -> JSONValue in
            ["session": ["id": "k"], "slides": .array(hashes.enumerated().map { ["n": .int($0.offset), "assetHash": .string(String(repeating: $0.element, count: 64)), "bytes": 1] })]
        }
        let old = try manifest(slides(["a", "b", "c", "d"]), in: folder, "old.json")
        let new = try manifest(slides(["a", "e", "c", "f", "1", "2", "3"]), in: folder, "new.json")
        let result = Support.cli(["diff", old.path, new.path])
        #expect(Array(result.out.prefix(3)) == ["slide 2 changed", "slide 4 changed", "slides 5–7 added"], "\(result.out)")
        let back = Support.cli(["diff", new.path, old.path])
        #expect(Array(back.out.prefix(3)) == ["slide 2 changed", "slide 4 changed", "slides 5–7 removed"], "\(back.out)")
    }

    /// Two sessions, a series against a session, a description instead of a manifest: one line, exit 65.
    @Test func mismatchedInputsAreRefused() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let keynote = try manifest(["session": ["id": "keynote"], "slides": []], in: folder, "keynote.json")
        let workshop = try manifest(["session": ["id": "workshop"], "slides": []], in: folder, "workshop.json")
        let series = try manifest(["series": ["id": "devconf"], "sessions": []], in: folder, "series.json")
        let description = Support.samples.appendingPathComponent("sessions/keynote.json")
        let cases: [([String], String)] = [
            ([keynote.path, workshop.path], #"workshop.json: is session "workshop", \#(keynote.path) is session "keynote": compare two versions of one session"#),
            ([series.path, keynote.path], "keynote.json: is a session manifest, \(series.path) a series manifest: compare two versions of one series"),
            ([description.path, keynote.path], "sessions/keynote.json: is a description file (the build's input), not a manifest"),
        ]
        for (arguments, message) in cases {
            let result = Support.cli(["diff"] + arguments)
            #expect(result.code == 65, "\(arguments)")
            #expect(result.err.count == 1 && result.err[0].contains(message), "\(result.err)")
        }
    }
}
