import Foundation
import PulseCore
import PulseCrypto
import PulseStore
import PulseTestSupport
import Testing

@testable import PulsePack

/// The manifests against ../shared/contract/pulse-mobile-sync.txt, section 3 and 4, field by field.
struct ManifestContractTests {
    let folder: TestFolder
    let out: URL
    let package: PulsePackage
    let index: PackageIndex

    init() throws {
        folder = try TestFolder("contract")
        out = folder.url.appendingPathComponent("pkg")
        try Support.build(Support.samples.appendingPathComponent("series.json"), out: out)
        package = PulsePackage(root: out)
        index = try package.readIndex()
    }

    func session(_ id: String) throws -> JSONValue {
        try package.readManifest(.sessions, id: id, packageVersion: try #require(index.sessions[id]).packageVersion)
    }

    @Test func sessionManifestHasExactlyTheContractFields() throws {
        let manifest = try session("keynote")
        #expect(Set(try #require(manifest.objectValue).keys) == [
            "session", "agenda", "speakers", "branding", "resources", "survey", "slides", "deckVersion", "packageVersion",
        ])
        let basics = try #require(manifest["session"])
        #expect(basics["id"] == "keynote")
        #expect(basics["title"]?.stringValue?.isEmpty == false)
        #expect(basics["startsAt"]?.stringValue != nil && basics["endsAt"]?.stringValue != nil)
        #expect(manifest["agenda"]?.arrayValue?.isEmpty == false)
        #expect(manifest["survey"]?["questions"]?.arrayValue?.count == 3)
    }

    @Test func slidesAreNAssetHashBytesFromZero() throws {
        let manifest = try session("keynote")
        let slides = try #require(manifest["slides"]?.arrayValue)
        #expect(slides.count == 14)
        for (position, slide) in slides.enumerated() {
            #expect(Set(try #require(slide.objectValue).keys) == ["n", "assetHash", "bytes"])
            #expect(slide["n"] == .int(position))
            let hash = try #require(slide["assetHash"]?.digestValue, "assetHash is 64 lowercase hex digits")
            #expect(slide["bytes"]?.intValue == package.assets.size(of: hash), "bytes is the ciphertext length")
        }
        #expect(manifest["deckVersion"] == 1)
    }

    @Test func packageVersionIsTheContentHash() throws {
        let manifest = try session("keynote")
        let version = try #require(manifest["packageVersion"]?.stringValue)
        #expect(version == PackageVersion.of(manifest))
        #expect(version == index.sessions["keynote"]?.packageVersion)
    }

    @Test func imagesArePublicAssetReferences() throws {
        let manifest = try session("keynote")
        let photos = (manifest["speakers"]?.arrayValue ?? []).compactMap { $0["photo"] }
        #expect(photos.count == 2)
        for image in photos + [try #require(manifest["branding"]?["logo"])] {
            #expect(Set(try #require(image.objectValue).keys) == ["assetHash", "bytes", "contentType"])
            let hash = try #require(image["assetHash"]?.digestValue)
            let bytes = try Data(contentsOf: package.assets.url(for: hash))
            #expect(bytes.count == image["bytes"]?.intValue)
            #expect(image["contentType"]?.stringValue?.hasPrefix("image/") == true)
        }
    }

    @Test func gatedResourcesAreMetadataOnlyAndNoReleaseTimeAnywhere() throws {
        let resources = try #require(try session("keynote")["resources"]?.arrayValue)
        let gated = resources.filter { $0["gated"] == true }
        #expect(gated.count >= 2)
        for resource in gated {
            #expect(Set(try #require(resource.objectValue).keys) == ["id", "title", "kind", "gated"])
        }
        // The sample input has release times; no file a device can get (manifests, public part) may carry
        // them: only the sync server's gated resources do.
        let input = try String(contentsOf: Support.samples.appendingPathComponent("sessions/keynote.json"), encoding: .utf8)
        let releaseTimes = input.components(separatedBy: "\"releaseAt\": \"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        #expect(!releaseTimes.isEmpty)
        for (path, bytes) in Support.snapshot(out) where !path.hasPrefix("server/gated/") {
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(!text.contains("releaseAt") && !text.contains("releaseAfterSlide"), "\(path)")
            for time in releaseTimes { #expect(!text.contains(time), "\(path) holds a release time") }
        }
    }

    @Test func seriesManifestHasDaysRoomsAndSessionRefs() throws {
        let entry = try #require(index.series["devconf-2026"])
        let manifest = try package.readManifest(.series, id: "devconf-2026", packageVersion: entry.packageVersion)
        #expect(Set(try #require(manifest.objectValue).keys) == ["series", "rooms", "days", "sessions", "packageVersion"])
        #expect(manifest["days"]?.arrayValue?.allSatisfy { $0["date"] != nil && $0["items"]?.arrayValue != nil } == true)
        let refs = try #require(manifest["sessions"]?.arrayValue)
        #expect(refs.map { $0["id"] } == ["keynote", "workshop"])
        for ref in refs {
            #expect(Set(try #require(ref.objectValue).keys) == ["id", "title", "packageVersion"])
            #expect(ref["packageVersion"]?.stringValue == index.sessions[ref["id"]!.stringValue!]?.packageVersion)
        }
        #expect(manifest["packageVersion"]?.stringValue == PackageVersion.of(manifest))
    }

    @Test func appConfigHasBrandingAndLogo() throws {
        let entry = try #require(index.appconfig["acme"])
        let config = try package.readManifest(.appconfig, id: "acme", packageVersion: entry.packageVersion)
        #expect(config["org"] == "acme")
        #expect(config["productName"]?.stringValue != nil)
        #expect(Set(try #require(config["colors"]?.objectValue).keys) == ["primary", "accent", "background", "text"])
        #expect(config["theme"] == "light" || config["theme"] == "dark")
        #expect(config["logo"]?["contentType"]?.stringValue?.hasPrefix("image/") == true)
    }

    @Test func keyTableIsTheImportFormatAndPrivate() throws {
        let url = package.keyTableURL(sessionId: "keynote", deckVersion: 1)
        let raw = try JSONValue.parse(Data(contentsOf: url))
        #expect(Set(try #require(raw.objectValue).keys) == ["packageId", "sessionId", "deckVersion", "packageVersion", "slides"])
        #expect(raw["packageId"]?.stringValue == index.packageId.hex)
        let slides = try #require(raw["slides"]?.arrayValue)
        #expect(slides.count == 14)
        for slide in slides {
            #expect(Set(try #require(slide.objectValue).keys) == ["n", "assetHash", "keyB64", "nonceB64"])
            #expect(Data(base64Encoded: slide["keyB64"]?.stringValue ?? "")?.count == 32)
            #expect(Data(base64Encoded: slide["nonceB64"]?.stringValue ?? "")?.count == 12)
        }
        let mode = { (url: URL) in try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int }
        #expect(try mode(url) == 0o600)
        #expect(try mode(try Support.secretURL(out)) == 0o600)
        #expect(try mode(try Support.secretURL(out).deletingLastPathComponent()) == 0o700)
        #expect(try mode(package.keysFolder) == 0o700)
        #expect(try mode(package.serverRoot) == 0o700)
    }

    @Test func secretsNeverReachPublishedFiles() throws {
        let secretText = try String(contentsOf: try Support.secretURL(out), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let secret = [UInt8](try #require(Data(base64Encoded: secretText)))
        let table = try package.readKeyTable(at: package.keyTableURL(sessionId: "keynote", deckVersion: 1))
        let keys = table.slides.flatMap { [$0.keyB64, $0.nonceB64] }
        let files = Support.snapshot(out)
        #expect(!files.keys.contains { $0 == "secret" || $0.hasSuffix("/secret") }, "the secret is not in the package folder")
        for (path, bytes) in files where !path.hasPrefix("server/keys/") {
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(!text.contains(secretText), "\(path)")
            #expect(Array(bytes).firstRange(of: secret) == nil, "\(path)")
            for key in keys { #expect(!text.contains(key), "\(path)") }
        }
    }
}
