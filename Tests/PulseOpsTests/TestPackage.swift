import Foundation
import PulseCore
import PulseCrypto
import PulseStore

/// A small package folder written by hand in a temp dir, as docs/package-format.md describes it:
/// blobs named by SHA-256, manifest files named by packageVersion, key tables, a secret, index.json last.
struct TestPackage {
    let root: URL
    var package: PulsePackage { PulsePackage(root: root) }

    /// A fresh temp folder (removed by the caller with `cleanUp()`).
    static func temporaryFolder(_ label: String = "pulse-ops") -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    init(root: URL = TestPackage.temporaryFolder()) {
        self.root = root
    }

    /// Writes blobs for `slides` (each string is one blob's content), a session manifest naming them,
    /// a series and an appconfig manifest, a key table, the secret, then index.json.
    /// - Returns: the session manifest's packageVersion.
    @discardableResult
    func publish(session: String = "keynote", slides: [String], logo: String = "logo-v1", mtime: Date? = nil) throws -> String {
        let store = package.assets
        try AtomicFile.makeFolder(store.folder)
        var references: [JSONValue] = []
        for (n, text) in slides.enumerated() {
            let bytes = Array(text.utf8)
            let hash = SHA256.hex(bytes)
            try store.put(bytes, hash: hash)
            references.append(["n": .int(n + 1), "assetHash": .string(hash), "bytes": .int(bytes.count)])
        }
        let logoBytes = Array(logo.utf8)
        try store.put(logoBytes, hash: SHA256.hex(logoBytes))
        let logoReference: JSONValue = ["assetHash": .string(SHA256.hex(logoBytes)), "bytes": .int(logoBytes.count), "contentType": "image/png"]

        let manifest = PackageVersion.stamped(["sessionId": .string(session), "slides": .array(references)]).manifest
        let sessionVersion = PackageVersion.of(manifest)
        try package.writeManifest(.sessions, id: session, manifest: manifest, packageVersion: sessionVersion)
        let series = PackageVersion.stamped(["seriesId": "devconf", "sessions": [.string(session)]]).manifest
        try package.writeManifest(.series, id: "devconf", manifest: series, packageVersion: PackageVersion.of(series))
        let config = PackageVersion.stamped(["org": "acme", "logo": logoReference]).manifest
        try package.writeManifest(.appconfig, id: "acme", manifest: config, packageVersion: PackageVersion.of(config))
        if let mtime {
            for (kind, id, version) in [(PulsePackage.Kind.sessions, session, sessionVersion),
                                        (.series, "devconf", PackageVersion.of(series)), (.appconfig, "acme", PackageVersion.of(config))] {
                try setModified(package.manifestURL(kind, id: id, packageVersion: version), mtime)
            }
        }

        let key = KeyTable.Slide(n: 1, assetHash: references.first?["assetHash"]?.stringValue ?? "", keyB64: "U0VDUkVULUtFWS1NQVRFUklBTA==", nonceB64: "AAAAAAAAAAAAAAAA")
        try package.writeKeyTable(KeyTable(sessionId: session, deckVersion: 1, packageVersion: sessionVersion, slides: [key]))
        try AtomicFile.write(Array("top secret package key".utf8), to: package.secretURL, mode: 0o600)
        var index = (try? package.readIndex()) ?? PackageIndex()
        index.sessions[session] = .init(packageVersion: sessionVersion, deckVersion: 1, deckDigest: String(repeating: "0", count: 64), highestDeckVersion: 1)
        index.series["devconf"] = .init(packageVersion: PackageVersion.of(series))
        index.appconfig["acme"] = .init(packageVersion: PackageVersion.of(config))
        try package.writeIndex(index)
        return sessionVersion
    }

    func setModified(_ url: URL, _ date: Date) throws {
        try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: url.path)
    }

    /// Hash of a slide text, the blob's name.
    static func hash(_ text: String) -> String { SHA256.hex(Array(text.utf8)) }

    /// Flips one byte of a stored blob in place (the file is 0444; root or not, chmod first).
    func corrupt(_ hash: String) throws {
        let url = package.assets.url(for: hash)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        var bytes = try Data(contentsOf: url)
        bytes[0] ^= 0x01
        try bytes.write(to: url)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: root) }
}
