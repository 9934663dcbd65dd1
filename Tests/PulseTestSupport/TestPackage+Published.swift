import Foundation
import PulseCore
import PulseCrypto
import PulseStore

/// A whole published package, committed through PulseStore's writers as `pulse-pack build` commits one
/// (blobs, manifests, blob lists, key table, then both indexes), with slide texts for blobs so that push and
/// gc tests can name each blob by its text.
extension TestPackage {
    /// Writes blobs for `slides` (each string is one blob's content), a session manifest naming them,
    /// a series and an appconfig manifest, their blob lists, a key table, then both indexes, with
    /// `publishedAt` as the publish time of the versions it makes current.
    /// - Returns: the session manifest's packageVersion.
    @discardableResult
    public func publish(session: String = "keynote", slides: [String], logo: String = "logo-v1", publishedAt: Date = Date()) throws -> String {
        let package = self.package
        let store = package.assets
        try package.makePartFolders(for: package.publicRoot)
        try AtomicFile.makeFolder(store.folder)
        var references: [JSONValue] = []
        for (n, text) in slides.enumerated() {
            let bytes = Array(text.utf8)
            let hash = Digest(of: bytes)
            try store.put(bytes, hash: hash)
            references.append(["n": .int(n + 1), "assetHash": JSONValue(hash), "bytes": .int(bytes.count)])
        }
        let logoBytes = Array(logo.utf8)
        try store.put(logoBytes, hash: Digest(of: logoBytes))
        let logoReference: JSONValue = ["assetHash": JSONValue(Digest(of: logoBytes)), "bytes": .int(logoBytes.count), "contentType": "image/png"]

        var index = try package.readIndexIfPresent() ?? PackageIndex(packageId: packageId)
        let time = Timestamp.string(publishedAt)
        func write(_ kind: DocumentKind, _ id: String, _ content: JSONValue) throws -> String {
            let (manifest, version) = PackageVersion.stamped(content)
            try package.writeManifest(kind, id: id, manifest: manifest, packageVersion: version)
            let list = BlobList(manifest: manifest)
            try package.writeBlobList(list)
            index.publish(kind, id, .init(packageVersion: version, refs: list.name, publishedAt: time))
            return version
        }
        let sessionVersion = try write(.sessions, session, ["sessionId": .string(session), "slides": .array(references)])
        let seriesVersion = try write(.series, "devconf", ["seriesId": "devconf", "sessions": [.string(session)]])
        let configVersion = try write(.appconfig, "acme", ["org": "acme", "logo": logoReference])

        let key = KeyTable.Slide(n: 1, assetHash: references.first?["assetHash"]?.digestValue ?? Digest(of: [UInt8]()), keyB64: "U0VDUkVULUtFWS1NQVRFUklBTA==", nonceB64: "AAAAAAAAAAAAAAAA")
        let previous = index.sessions[session]
        let deckVersion = previous?.packageVersion == sessionVersion ? previous!.deckVersion : (previous?.highestDeckVersion ?? 0) + 1
        try package.writeKeyTable(KeyTable(packageId: packageId, sessionId: session, deckVersion: deckVersion, packageVersion: sessionVersion, slides: [key]))
        index.sessions[session] = .init(packageVersion: sessionVersion, deckVersion: deckVersion, deckDigest: String(repeating: "0", count: 64),
                                        highestDeckVersion: deckVersion)
        index.series["devconf"] = .init(packageVersion: seriesVersion)
        index.appconfig["acme"] = .init(packageVersion: configVersion)
        try package.writeIndexes(index)
        return sessionVersion
    }

    /// The blob list of `slides` as a session manifest names them: its file in the public part.
    public static func refs(_ slides: [String]) -> String {
        let entries = slides.map { BlobList.Entry(assetHash: hash($0), bytes: $0.utf8.count) }
        return "refs/\(BlobList(entries).name).json"
    }

    /// Flips one byte of a stored blob in place (the file is 0444; root or not, chmod first).
    public func corrupt(_ hash: Digest) throws {
        let url = package.assets.url(for: hash)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        var bytes = try Data(contentsOf: url)
        bytes[0] ^= 0x01
        try bytes.write(to: url)
    }
}
