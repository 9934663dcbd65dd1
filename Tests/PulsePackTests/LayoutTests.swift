import Foundation
import PulseAge
import PulseCore
import PulseCrypto
import PulseStore
import PulseTestSupport
import Testing

@testable import PulsePack
@testable import PulsePackCLI

/// Slide keys are bound to the package and the session (issue 7, item 3).
struct SessionBindingTests {
    /// The same deck in two sessions of one package: every slide gets another key and another blob, so
    /// releasing a key in one session opens nothing in the other. An unchanged slide of one session
    /// still keeps its blob across rebuilds.
    @Test func theSameDeckInTwoSessionsHasOtherKeysAndOtherBlobs() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = folder.appendingPathComponent("pkg")
        let deck = Support.fixtures.appendingPathComponent("pdf/three-pages.pdf")
        try Support.build(try Support.sessionFile(in: folder, deck: deck, id: "talk"), out: out)
        try Support.build(try Support.sessionFile(in: folder, deck: deck, id: "encore"), out: out)
        let package = PulsePackage(root: out)
        func table(_ id: String) throws -> KeyTable {
            try package.readKeyTable(at: package.keyTableURL(sessionId: id, deckVersion: 1))
        }
        let talk = try table("talk"), encore = try table("encore")
        #expect(talk.slides.count == 3 && encore.slides.count == 3)
        #expect(Set(talk.slides.map(\.assetHash)).isDisjoint(with: encore.slides.map(\.assetHash)))
        #expect(Set(talk.slides.map(\.keyB64)).isDisjoint(with: encore.slides.map(\.keyB64)))
        for (a, b) in zip(talk.slides, encore.slides) {
            let blob = try Data(contentsOf: package.assets.url(for: b.assetHash))
            #expect(throws: CryptoError.self, "slide \(a.n): talk's key opens encore's blob") {
                try AES256GCM.open(blob, key: Array(Data(base64Encoded: a.keyB64)!), nonce: Array(Data(base64Encoded: a.nonceB64)!))
            }
        }
        let report = Verifier(package: out, keys: nil).run()
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.slidesDecrypted == 6)
        let again = try Support.build(try Support.sessionFile(in: folder, deck: deck, id: "talk"), out: out)
        #expect(again.sessions[0].newBlobs == 0 && again.sessions[0].deckVersion == 1)
    }

    /// Within one session, a released key opens its own slide's blob and no other slide's: an attacker holding
    /// the CDN (every blob) and one released key reads that slide and nothing else.
    @Test func aReleasedKeyOpensItsOwnSlideAndNoOther() throws {
        let temporary = try TestFolder()
        let out = temporary.url.appendingPathComponent("pkg")
        let deck = Support.fixtures.appendingPathComponent("pdf/three-pages.pdf")
        try Support.build(try Support.sessionFile(in: temporary.url, deck: deck, id: "talk"), out: out)
        let package = PulsePackage(root: out)
        let slides = try package.readKeyTable(at: package.keyTableURL(sessionId: "talk", deckVersion: 1)).slides
        #expect(slides.count == 3 && Set(slides.map(\.assetHash)).count == 3)
        for key in slides {
            let secret = try #require(Data(base64Encoded: key.keyB64)), nonce = try #require(Data(base64Encoded: key.nonceB64))
            for blob in slides {
                let bytes = try Data(contentsOf: package.assets.url(for: blob.assetHash))
                if blob.n == key.n {
                    #expect(throws: Never.self) { try AES256GCM.open(bytes, key: Array(secret), nonce: Array(nonce)) }
                } else {
                    #expect(throws: CryptoError.self, "slide \(key.n)'s key opens slide \(blob.n)") {
                        try AES256GCM.open(bytes, key: Array(secret), nonce: Array(nonce))
                    }
                }
            }
        }
    }

    /// The same session in two packages with the same secret (two ids): other blobs.
    @Test func theSamePackageSecretInTwoPackagesGivesOtherBlobs() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let secret = try Support.secretFile(in: folder)
        let session = try Support.sessionFile(in: folder, deck: Support.fixtures.appendingPathComponent("pdf/three-pages.pdf"))
        let one = try Support.build(session, out: folder.appendingPathComponent("one"), secret: secret)
        let two = try Support.build(session, out: folder.appendingPathComponent("two"), secret: secret)
        let blobs = { (out: String) in Set(try FileManager.default.contentsOfDirectory(atPath: out + "/public/assets")) }
        #expect(try blobs(one.package).isDisjoint(with: try blobs(two.package)))
    }

    /// The derivation is exactly docs/crypto.md's: HKDF-SHA256(S, "pulse-pack/v2/slide",
    /// lp(packageId bytes) ‖ lp(sessionId) ‖ SHA-256(plaintext), 44).
    /// The pipeline's path, sealing into a buffer kept from slide to slide, gives `seal`'s blob, name
    /// and keys, whatever the buffer held before.
    @Test func sealingIntoAKeptBufferIsSeal() throws {
        let cipher = SlideCipher(secret: SecretBytes(Array(0..<32).map(UInt8.init)), packageId: Support.packageID, sessionId: "keynote")
        var buffer = [UInt8](repeating: 0x5a, count: 300_000)
        for size in [200_000, 70_000, 3, 0] {
            let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let sealed = try cipher.seal(plaintext)
            let inPlace = try cipher.seal(plaintext, into: &buffer)
            #expect(Array(buffer[..<inPlace.count]) == sealed.ciphertext)
            #expect(inPlace.assetHash == sealed.assetHash)
            #expect(inPlace.key.isEqual(to: sealed.key.copyBytes()) && inPlace.nonce.isEqual(to: sealed.nonce.copyBytes()))
        }
    }

    @Test func keysAreTheDocumentedDerivation() throws {
        let secret = Array(0..<32).map(UInt8.init)
        let plaintext = Array("a slide".utf8)
        let cipher = SlideCipher(secret: SecretBytes(secret), packageId: Support.packageID, sessionId: "keynote")
        let sealed = try cipher.seal(plaintext)
        let info: [UInt8] = [0, 0, 0, 16] + Hex.decode(Support.packageId)! + [0, 0, 0, 7] + Array("keynote".utf8) + SHA256.hash(plaintext)
        let material = try HKDF.sha256(inputKeyMaterial: secret, salt: Array("pulse-pack/v2/slide".utf8), info: info, count: 44)
        #expect(sealed.key.isEqual(to: Array(material[0..<32])))
        #expect(sealed.nonce.isEqual(to: Array(material[32..<44])))
        #expect(try AES256GCM.open(sealed.ciphertext, key: Array(material[0..<32]), nonce: Array(material[32..<44])) == plaintext)
        #expect(sealed.assetHash == Digest(of: sealed.ciphertext))
        // Length prefixes keep the fields apart: ("ab", "c…") and ("abc", "…") never meet.
        #expect(SlideCipher.lengthPrefixed(Array("ab".utf8)) == [0, 0, 0, 2, 0x61, 0x62])
    }
}

/// What push sends is the public part and nothing else (issue 7, item 4).
struct PublicPartTests {
    @Test func pushSendsNoManifestKeyTableGatedResourceOrSecret() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = folder.appendingPathComponent("pkg"), target = folder.appendingPathComponent("cdn")
        try Support.build(Support.samples.appendingPathComponent("series.json"), out: out)
        let push = try Support.executable(["push", out.path, "--to", target.path])
        #expect(push.code == 0, "\(push.err)")

        let package = PulsePackage(root: out)
        let published = Support.snapshot(target)
        #expect(published.count > 30)
        for path in published.keys {
            let top = path.split(separator: "/")[0]
            #expect(path == "index.json" || ["assets", "refs", "appconfig"].contains(top), "\(path) was pushed")
        }
        // Nothing device-scoped in any of it: no manifest, no key, no gated content, no secret.
        let secretText = try String(contentsOf: try Support.secretURL(out), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let index = try package.readIndex()
        var forbidden = [secretText, "\"slides\"", "\"deckVersion\"", "DevConf-Guest", "KEYNOTE-2026", "keynote-demo", "workshop-solutions"]
        forbidden += index.sessions.values.map(\.packageVersion) + index.series.values.map(\.packageVersion)
        for id in ["keynote", "workshop"] {
            forbidden += try package.readKeyTable(at: package.keyTableURL(sessionId: id, deckVersion: 1)).slides.flatMap { [$0.keyB64, $0.nonceB64] }
        }
        let manifests = Set(package.manifestFiles().filter { !$0.kind.isPublic }.compactMap { try? Data(contentsOf: $0.url) })
        for (path, bytes) in published {
            let text = String(decoding: bytes, as: UTF8.self)
            for needle in forbidden { #expect(!text.contains(needle), "\(path) holds \(needle.prefix(24))") }
            #expect(!manifests.contains(bytes), "\(path) is a manifest")
        }
        #expect(published.keys.filter { !$0.hasPrefix("assets/") }.allSatisfy { published[$0] == Support.snapshot(package.publicRoot)[$0] })
    }
}

/// Timeline-gated resources keep their content and rule for the server part.
struct GatedResourceTests {
    @Test func gatedResourcesKeepTheirEntryAndRule() throws {
        let outFolder = try TestFolder()
        let out = outFolder.url.appendingPathComponent("pkg")
        try Support.build(Support.samples.appendingPathComponent("series.json"), out: out)
        let package = PulsePackage(root: out)
        let index = try package.readIndex()
        let session = try #require(index.sessions["keynote"])
        let name = try #require(session.gated)
        let url = package.gatedURL(sessionId: "keynote", name: name)
        let bytes = try Data(contentsOf: url)
        #expect(SHA256.hex(bytes) == name)
        #expect(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int == 0o600)
        let gated = try JSONValue.parse(bytes)
        #expect(gated["sessionId"] == "keynote")
        #expect(gated["packageVersion"]?.stringValue == session.packageVersion)
        let resources = try #require(gated["resources"]?.arrayValue)
        #expect(resources.map { $0["id"] } == ["demo-code", "slides-pdf", "workshop-code"])
        #expect(resources[0]["releaseAfterSlide"] == 9 && resources[0]["releaseAt"] == nil)
        #expect(resources[1]["releaseAfterSlide"] == 13)
        #expect(resources[2]["releaseAt"] == "2026-12-03T10:22:00+01:00" && resources[2]["releaseAfterSlide"] == nil)
        #expect(resources[0]["entry"] == [
            "id": "demo-code", "title": "Demo source code", "kind": "link", "gated": false,
            "url": "https://example.com/devconf-2026/keynote-demo",
        ])
        #expect(resources[2]["entry"]?["body"] == "Use code KEYNOTE-2026 for a free seat in tomorrow's workshop.")
        #expect(index.versions(.sessions, "keynote").first?.gated == name)
        // The server substitutes the entries once released: the manifest's packageVersion is recomputed.
        let manifest = try package.readManifest(.sessions, id: "keynote", packageVersion: session.packageVersion)
        var released = try #require(manifest.objectValue)
        released["resources"] = .array(try #require(manifest["resources"]?.arrayValue).map { entry in
            resources.first { $0["id"] == entry["id"] }?["entry"] ?? entry
        })
        #expect(PackageVersion.of(.object(released)) != session.packageVersion)
    }

    /// Editing only a gated resource leaves the manifest (and its packageVersion) as it was, but not the
    /// gated file: it is named by its own content, so the old one is never rewritten in place.
    @Test func editingOnlyAGatedResourceMakesANewGatedFile() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = folder.appendingPathComponent("pkg")
        let deck = Support.fixtures.appendingPathComponent("pdf/three-pages.pdf")
        let resource = { (url: String) in
            #", "resources": [{ "id": "code", "title": "Code", "kind": "link", "url": "\#(url)", "releaseAfterSlide": 2 }]"#
        }
        let first = try Support.build(try Support.sessionFile(in: folder, deck: deck, extra: resource("https://example.com/a")), out: out)
        let package = PulsePackage(root: out)
        let before = try #require(try package.readIndex().sessions["talk"]?.gated)
        let second = try Support.build(try Support.sessionFile(in: folder, deck: deck, extra: resource("https://example.com/b")), out: out)
        #expect(second.sessions[0].packageVersion == first.sessions[0].packageVersion)
        let index = try package.readIndex()
        let after = try #require(index.sessions["talk"]?.gated)
        #expect(after != before)
        #expect(index.versions(.sessions, "talk").map(\.gated) == [after])
        #expect(try String(contentsOf: package.gatedURL(sessionId: "talk", name: after), encoding: .utf8).contains("example.com/b"))
        #expect(try String(contentsOf: package.gatedURL(sessionId: "talk", name: before), encoding: .utf8).contains("example.com/a"))
        #expect(Verifier(package: out, keys: nil).run().problems.isEmpty)
    }
}

/// The secret outside the package, the package id, private key folders.
struct SecretAndIdTests {
    @Test func theSecretLivesOutsideThePackageFolder() throws {
        let outFolder = try TestFolder()
        let out = outFolder.url.appendingPathComponent("pkg")
        let report = try Support.build(Support.samples.appendingPathComponent("series.json"), out: out)
        let home = try Support.secretURL(out)
        #expect(report.secret == home.path && report.secretCreated)
        #expect(home.path.hasPrefix(Support.configHome.path + "/pulse-pack/secrets/"))
        #expect(!(try FileManager.default.subpathsOfDirectory(atPath: out.path)).contains { $0.hasSuffix("secret") })
        let mode = { (url: URL) in try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int }
        #expect(try mode(home) == 0o600 && mode(home.deletingLastPathComponent()) == 0o700)
        // The next build finds it there: nothing is encrypted anew.
        let again = try Support.build(Support.samples.appendingPathComponent("series.json"), out: out)
        #expect(!again.secretCreated && again.sessions.allSatisfy { $0.newBlobs == 0 })
    }

    /// A build killed while it created a secret leaves a staging file holding a secret; the next creation
    /// in that folder removes it once it is an hour old.
    @Test func abandonedSecretStagingFilesAreRemoved() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let old = folder.appendingPathComponent(".tmp-.tmp-secret-ABANDONED"), fresh = folder.appendingPathComponent(".tmp-secret-IN-PROGRESS")
        let staged = folder.appendingPathComponent(".tmp-\(Support.packageId)-ABANDONED")  // FileSystem.createNew's staging name
        for url in [old, fresh, staged] { try Data("x".utf8).write(to: url) }
        for url in [old, staged] {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: url.path)
        }
        #expect(try PackageSecret.create(try SecretBytes.random(count: 32), at: folder.appendingPathComponent(Support.packageId)) == nil)
        #expect(!FileManager.default.fileExists(atPath: old.path) && !FileManager.default.fileExists(atPath: staged.path))
        #expect(FileManager.default.fileExists(atPath: fresh.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [".tmp-secret-IN-PROGRESS", Support.packageId])
    }

    @Test func aSecretFileInsideThePackageIsRefusedAndAMissingOneIsCreated() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = folder.appendingPathComponent("pkg")
        let session = try Support.sessionFile(in: folder, deck: Support.fixtures.appendingPathComponent("pdf/three-pages.pdf"))
        try Support.build(session, out: out)
        let before = Support.snapshot(out)
        let inside = Support.cli(["build", session.path, "--out", out.path, "--secret-file", out.appendingPathComponent("public/secret").path])
        #expect(inside.code == 65)
        #expect(inside.err.count == 1 && inside.err[0].contains("inside the package folder"), "\(inside.err)")
        #expect(Support.snapshot(out) == before)
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("public/secret").path))

        let file = folder.appendingPathComponent("ci/package.secret")
        let created = Support.cli(["build", session.path, "--out", folder.appendingPathComponent("other").path, "--secret-file", file.path, "--quiet"])
        #expect(created.code == 0, "\(created.err)")
        #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int == 0o600)
        #expect(try Data(base64Encoded: String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))?.count == 32)
    }

    @Test func thePackageIdIsRecordedAndMustMatch() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = folder.appendingPathComponent("pkg")
        let session = try Support.sessionFile(in: folder, deck: Support.fixtures.appendingPathComponent("pdf/three-pages.pdf"))
        try Support.build(session, out: out)
        let package = PulsePackage(root: out)
        let id = try package.readIndex().packageId
        #expect(id.hex.count == 2 * PackageID.byteCount)
        #expect(try package.publicPart.readIndex().packageId == id)
        #expect(try package.readKeyTable(at: package.keyTableURL(sessionId: "talk", deckVersion: 1)).packageId == id)
        let before = Support.snapshot(out)
        let other = Support.cli(["build", session.path, "--out", out.path, "--package-id", Support.packageId])
        #expect(other.code == 65)
        #expect(other.err.count == 1 && other.err[0].contains("is package \(id), not --package-id \(Support.packageId)"), "\(other.err)")
        #expect(Support.snapshot(out) == before)
        #expect(Support.cli(["build", session.path, "--out", out.path, "--package-id", "not-hex"]).code == 65)
        #expect(Support.cli(["build", session.path, "--out", out.path, "--package-id", id.hex, "--quiet"]).code == 0)
    }

    /// A keys folder left open to others (an older pulse-pack, a copy, a umask) is closed by the next build.
    @Test func anOpenKeysFolderIsTightenedTo0700() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = folder.appendingPathComponent("pkg")
        let session = try Support.sessionFile(in: folder, deck: Support.fixtures.appendingPathComponent("pdf/three-pages.pdf"))
        try Support.build(session, out: out)
        let package = PulsePackage(root: out)
        let folders = [package.serverRoot, package.keysFolder, package.keysFolder.appendingPathComponent("talk")]
        for url in folders { chmod(url.path, 0o755) }
        #expect(Verifier(package: out, keys: nil).run().problems.count == 3)
        try Support.build(session, out: out)
        for url in folders {
            #expect(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int == 0o700, "\(url.path)")
        }
        #expect(Verifier(package: out, keys: nil).run().problems.isEmpty)
    }
}

/// `--seal-to` on a package that has plaintext key tables (issue 11, item 2).
struct SealEveryTableTests {
    @Test func sealToSealsTheUnchangedSessionsTablesToo() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let samples = try Support.copy(Support.samples, to: folder.appendingPathComponent("samples"))
        let out = folder.appendingPathComponent("pkg")
        let series = samples.appendingPathComponent("series.json")
        try Support.build(series, out: out)
        let package = PulsePackage(root: out)
        let plaintext = { () throws -> [String] in
            try FileManager.default.subpathsOfDirectory(atPath: package.keysFolder.path).filter { $0.hasSuffix(".json") }.sorted()
        }
        #expect(try plaintext() == ["keynote/1.json", "workshop/1.json"])

        // The workshop deck changes; the keynote does not.
        let slide = samples.appendingPathComponent("decks/workshop-images/slide5.png")
        try FileManager.default.removeItem(at: slide)
        try FileManager.default.copyItem(at: samples.appendingPathComponent("decks/keynote-images/slide2.png"), to: slide)
        let identity = try AgeIdentity.generate()
        let report = try Support.build(series, out: out, sealTo: [identity.recipient.description])
        #expect(report.sessions.map(\.deckVersion) == [1, 2])
        #expect(try plaintext().isEmpty, "no key table stays in plaintext")
        let sealed = try FileManager.default.subpathsOfDirectory(atPath: package.keysFolder.path).filter { $0.hasSuffix(".age") }.sorted()
        #expect(sealed == ["keynote/1.json.age", "workshop/1.json.age", "workshop/2.json.age"])
        let verified = Verifier(package: out, keys: nil, identities: [identity]).run()
        #expect(verified.problems.isEmpty, "\(verified.problems)")
        #expect(verified.slidesDecrypted == 26)
        let keynote = try SealedKeyTable.open(Array(try Data(contentsOf: package.keysFolder.appendingPathComponent("keynote/1.json.age"))),
                                              identities: [identity])
        #expect(keynote.packageVersion == report.sessions[0].packageVersion)
    }
}

/// The history: every version still in the package, newest first, with its publish time.
struct HistoryTests {
    @Test func aRevertIsPublishedAgainAndAnUnchangedRebuildChangesNothing() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let out = folder.appendingPathComponent("pkg")
        let deck = Support.fixtures.appendingPathComponent("pdf/three-pages.pdf")
        let a = try Support.sessionFile(in: folder, deck: deck)
        let b = try Support.sessionFile(in: folder, deck: deck, agenda: #"[{ "start": "09:00", "durationMinutes": 10, "title": "Intro" }]"#)
        let at = { (seconds: Int) in ["SOURCE_DATE_EPOCH": "\(seconds)"] }
        let v1 = try Support.build(a, out: out, environment: at(1_000_000_000)).sessions[0].packageVersion
        let v2 = try Support.build(b, out: out, environment: at(1_000_000_100)).sessions[0].packageVersion
        try Support.build(a, out: out, environment: at(1_000_000_200))
        let package = PulsePackage(root: out)
        let versions = try package.readIndex().versions(.sessions, "talk")
        #expect(versions.map(\.packageVersion) == [v1, v2])
        #expect(versions.map(\.publishedAt) == ["2001-09-09T01:50:00Z", "2001-09-09T01:48:20Z"])
        #expect(try package.publicPart.readIndex().history["sessions/talk"]?.map(\.publishedAt) == versions.map(\.publishedAt))
        let before = Support.snapshot(out)
        try Support.build(a, out: out, environment: at(1_000_000_300))
        #expect(Support.snapshot(out) == before)
    }

    @Test func timestampsRoundTrip() {
        for seconds in [0, 951_782_400, 1_796_392_800, 4_102_444_799] {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            #expect(Timestamp.date(Timestamp.string(date)) == date)
        }
        #expect(Timestamp.string(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00Z")
        #expect(Timestamp.date("2026-12-01T14:00:00+01:00") == nil)
        #expect(Timestamp.date("2026-13-01T14:00:00Z") == nil)
    }
}
