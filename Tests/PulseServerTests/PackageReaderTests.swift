import Foundation
import PulseAge
import PulseCore
import PulseCrypto
import PulseServer
import PulseServerStorage
import PulseTestSupport
import Testing

@Suite struct PackageReaderTests {
    /// A series with a plain session and a gated session whose table is sealed.
    static func sample(_ name: String = #function) throws -> (TestPackage, AgeIdentity) {
        let package = try TestPackage(packageId: TestContent.packageAID, name)
        let identity = try AgeIdentity.generate()
        try package.addSession("keynote", deckVersion: 2, slides: 5, series: "conf")
        try package.addSession(
            "lab", slides: 3,
            gated: [.init(id: "solutions", releaseAfterSlide: 2), .init(id: "survey", releaseAfterSlide: 1, releaseAt: "2026-12-03T10:15:00+01:00")],
            series: "conf", sealedTo: identity.recipient)
        try package.addSeries("conf", sessions: ["keynote", "lab"])
        try package.commit()
        return (package, identity)
    }

    @Test func readsEveryPartOfAServerPart() throws {
        let (package, identity) = try Self.sample()
        let plan = try PackageReader(package: package.root, identities: [identity]).read()
        #expect(plan.packageId == package.packageId)
        #expect(plan.sessions.map(\.id) == ["keynote", "lab"].sorted())
        let keynote = try #require(plan.sessions.first { $0.id == "keynote" })
        #expect(keynote.deckVersion == 2 && keynote.slideCount == 5 && keynote.seriesId == "conf" && keynote.gated.isEmpty)
        let expected = TestPackage.slides("keynote", deckVersion: 2, count: 5)
        #expect(keynote.keyTable.slides.map(\.keyB64) == expected.map { Data($0.key).base64EncodedString() })
        #expect(keynote.keyTable.packageId == package.packageId)
        // The stored manifest is the file's canonical content, and hashes to its version.
        #expect(PackageVersion.of(try JSONValue.parse(Data(keynote.manifest))) == keynote.packageVersion)

        let lab = try #require(plan.sessions.first { $0.id == "lab" })
        #expect(lab.gated.map(\.id) == ["solutions", "survey"])
        #expect(lab.gated[0].rule == GateRule(releaseAfterSlide: 2))
        #expect(lab.gated[1].rule == GateRule(releaseAfterSlide: 1, releaseAt: 1_796_289_300))  // 09:15Z
        #expect(lab.gated[0].entry["url"] == "https://example.org/solutions")
        #expect(lab.keyTable.slides.count == 3)
        #expect(plan.series.map(\.id) == ["conf"] && plan.series[0].sessionIds == ["keynote", "lab"])
    }

    @Test func aCopiedServerPartReadsTheSame() throws {
        let (package, identity) = try Self.sample()
        let plan = try PackageReader(package: package.server, identities: [identity]).read()
        #expect(plan.sessions.count == 2)
    }

    @Test func pendingTablesAreIgnored() throws {
        let (package, identity) = try Self.sample()
        try package.write(Array("not json".utf8), "keys/keynote/2.json.pending-\(String(repeating: "1", count: 64))")
        #expect(try PackageReader(package: package.root, identities: [identity]).read().sessions.count == 2)
    }

    /// Each bad input gives one line naming the file (and the field), never a key.
    static func failure(_ package: TestPackage, identities: [AgeIdentity] = []) throws -> String {
        do {
            _ = try PackageReader(package: package.root, identities: identities).read()
        } catch let error as InputError {
            return error.description.replacingOccurrences(of: package.server.path + "/", with: "")
        }
        Issue.record("no error")
        return ""
    }

    @Test func sealedTablesNeedTheRightIdentity() throws {
        let (package, _) = try Self.sample()
        #expect(try Self.failure(package) == "keys/lab/1.json.age: sealed key table: pass --identity FILE (the key server's age identity)")
        #expect(try Self.failure(package, identities: [try AgeIdentity.generate()]).hasPrefix("keys/lab/1.json.age: cannot open with the given identity: no identity matches"))
    }

    @Test func aChangedManifestIsCaught() throws {
        let (package, identity) = try Self.sample()
        let version = package.sessions["keynote"]!["packageVersion"]!.stringValue!
        try package.edit("sessions/keynote/\(version).json") { $0["resources"] = [] }
        #expect(try Self.failure(package, identities: [identity]).hasSuffix(" not \(version): the file was changed"))
        // A consistent manifest (re-stamped) that disagrees with the index is caught too.
        try package.edit("sessions/keynote/\(version).json") { fields in
            fields["deckVersion"] = 3
            fields = PackageVersion.stamped(.object(fields)).manifest.objectValue!
        }
        let restamped = try JSONValue.parse(Data(contentsOf: package.url("sessions/keynote/\(version).json")))
        let newVersion = restamped["packageVersion"]!.stringValue!
        try package.write(restamped.prettyBytes, "sessions/keynote/\(newVersion).json")
        package.sessions["keynote"] = .object(package.sessions["keynote"]!.objectValue!.merging(["packageVersion": .string(newVersion)]) { $1 })
        try package.commit()
        #expect(try Self.failure(package, identities: [identity]) == "sessions/keynote/\(newVersion).json: deckVersion: expected 2 (the index's deckVersion)")
    }

    @Test func keyTablesMustMatchTheManifestAndThePackage() throws {
        let wrongHash = try TestPackage(packageId: TestContent.packageAID)
        try wrongHash.addSession("talk", keyTable: { table in
            guard case var .array(slides)? = table["slides"], case var .object(first) = slides[1] else { return }
            first["assetHash"] = .string(String(repeating: "e", count: 64))
            slides[1] = .object(first)
            table["slides"] = .array(slides)
        })
        try wrongHash.commit()
        #expect(try Self.failure(wrongHash) == "keys/talk/1.json: slides[1].assetHash: does not match the manifest's slide 1")

        let otherPackage = try TestPackage(packageId: TestContent.packageAID)
        try otherPackage.addSession("talk", keyTable: { $0["packageId"] = .string(TestContent.packageB) })
        try otherPackage.commit()
        #expect(try Self.failure(otherPackage) == "keys/talk/1.json: packageId: expected \(TestContent.packageA), the package's id")

        let noPackage = try TestPackage(packageId: TestContent.packageAID)
        try noPackage.addSession("talk", keyTable: { $0["packageId"] = nil })
        try noPackage.commit()
        #expect(try Self.failure(noPackage) == "keys/talk/1.json: packageId: missing (key tables of pulse-package/2 name their package)")

        let shortKey = try TestPackage(packageId: TestContent.packageAID)
        let secret = Data(repeating: 0x41, count: 31).base64EncodedString()
        try shortKey.addSession("talk", keyTable: { table in
            guard case var .array(slides)? = table["slides"], case var .object(first) = slides[0] else { return }
            first["keyB64"] = .string(secret)
            slides[0] = .object(first)
            table["slides"] = .array(slides)
        })
        try shortKey.commit()
        let message = try Self.failure(shortKey)
        #expect(message == "keys/talk/1.json: slides[0].keyB64: not 32 bytes of base64")
        #expect(!message.contains(secret))

        let fewer = try TestPackage(packageId: TestContent.packageAID)
        try fewer.addSession("talk", keyTable: { table in
            guard case let .array(slides)? = table["slides"] else { return }
            table["slides"] = .array(Array(slides.dropLast()))
        })
        try fewer.commit()
        #expect(try Self.failure(fewer) == "keys/talk/1.json: slides: 4 keys for the manifest's 5 slides")

        let missing = try TestPackage(packageId: TestContent.packageAID)
        try missing.addSession("talk")
        try FileManager.default.removeItem(at: missing.url("keys/talk/1.json"))
        try missing.commit()
        #expect(try Self.failure(missing) == "keys/talk/1.json: missing: no key table (.json or .json.age) for deckVersion 1")
    }

    @Test func gatedFilesMustMatchTheManifest() throws {
        let outOfRange = try TestPackage(packageId: TestContent.packageAID)
        try outOfRange.addSession("talk", slides: 3, gated: [.init(id: "r", releaseAfterSlide: 3)])
        try outOfRange.commit()
        #expect(try Self.failure(outOfRange) == "\(outOfRange.gatedFile("talk")): resources[0].releaseAfterSlide: expected a slide number from 0 to 2")

        let noRule = try TestPackage(packageId: TestContent.packageAID)
        try noRule.addSession("talk", gated: [.init(id: "r")])
        try noRule.commit()
        #expect(try Self.failure(noRule).hasSuffix("resources[0]: has neither releaseAfterSlide nor releaseAt: it could never be released"))

        let badTime = try TestPackage(packageId: TestContent.packageAID)
        try badTime.addSession("talk", gated: [.init(id: "r", releaseAt: "tomorrow")])
        try badTime.commit()
        #expect(try Self.failure(badTime).hasSuffix("resources[0].releaseAt: expected a time like 2026-12-03T10:15:00+01:00"))

        let unmarked = try TestPackage(packageId: TestContent.packageAID)
        try unmarked.addSession("talk", gated: [.init(id: "r", releaseAfterSlide: 1)])
        unmarked.sessions["talk"] = .object(unmarked.sessions["talk"]!.objectValue!.filter { $0.key != "gated" })
        try unmarked.commit()
        #expect(try Self.failure(unmarked).hasSuffix(": resources: has gated resources, but index.json names no gated file for the session"))

        let retitled = try TestPackage(packageId: TestContent.packageAID)
        try retitled.addSession("talk", gated: [.init(id: "r", releaseAfterSlide: 1)])
        try retitled.commit()
        let gatedFile = retitled.gatedFile("talk")
        try retitled.edit(gatedFile) { fields in
            fields["resources"] = [["id": "r", "releaseAfterSlide": 1, "entry": ["id": "r", "title": "Other", "kind": "link", "gated": false]]]
        }
        #expect(try Self.failure(retitled) == "\(gatedFile): content does not hash to its name: the file was changed or damaged")
        // Renamed to its new hash, the content itself is checked.
        try retitled.rename(gatedFile, session: "talk")
        #expect(try Self.failure(retitled) == "\(retitled.gatedFile("talk")): resources[0].entry.title: differs from the manifest's gated entry")
        try retitled.edit(retitled.gatedFile("talk")) { $0["resources"] = [] }
        try retitled.rename(retitled.gatedFile("talk"), session: "talk")
        #expect(try Self.failure(retitled) == "\(retitled.gatedFile("talk")): resources: no entry for the manifest's gated resource \"r\"")
    }

    @Test func seriesRefsMustNameCurrentSessionsOfThePackage() throws {
        let package = try TestPackage(packageId: TestContent.packageAID)
        try package.addSession("talk")
        let version = try package.addSeries("conf", sessions: ["talk"])
        try package.addSession("talk", note: "rebuilt")  // the session moved on, the series ref did not
        try package.commit()
        #expect(try Self.failure(package) == "series/conf/\(version).json: sessions[0].packageVersion: expected \(package.sessions["talk"]!["packageVersion"]!.stringValue!), the current version of talk")

        let stranger = try TestPackage(packageId: TestContent.packageAID)
        try stranger.addSession("talk")
        let strangerVersion = try stranger.addSeries("conf", sessions: ["talk", "elsewhere"])
        try stranger.commit()
        #expect(try Self.failure(stranger) == "series/conf/\(strangerVersion).json: sessions[1].id: names no session of this package")
    }

    @Test func indexProblemsAreNamed() throws {
        let package = try TestPackage(packageId: TestContent.packageAID)
        try package.addSession("talk")
        package.sessions["../etc"] = package.sessions["talk"]
        try package.commit()
        #expect(try Self.failure(package) == "index.json: sessions.../etc: not a valid id ([a-z0-9][a-z0-9-]{0,63})")

        let old = try TestPackage(packageId: TestContent.packageAID)
        try Data(#"{"format": "pulse-package/1", "sessions": {}}"#.utf8).write(to: old.root.appendingPathComponent("index.json"))
        let error = #expect(throws: InputError.self) { try PackageReader(package: old.root) }
        #expect(error?.message == "a pulse-package/1 package has no server part; run pulse-pack build on it to migrate it")

        let empty = try TestPackage(packageId: TestContent.packageAID)
        #expect(throws: InputError.self) { try PackageReader(package: empty.root) }

        let format = try TestPackage(packageId: TestContent.packageAID)
        try format.commit()
        try format.edit("index.json") { $0["format"] = "pulse-package/3" }
        #expect(try Self.failure(format) == "index.json: format: expected \"pulse-package/2\", found \"pulse-package/3\"")
        try format.edit("index.json") { $0["format"] = "pulse-package/2"; $0["packageId"] = "ABC" }
        #expect(try Self.failure(format) == "index.json: packageId: expected 32 lowercase hex digits, found \"ABC\"")
    }
}
