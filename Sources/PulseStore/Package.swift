import Foundation
import PulseCore

/// A package folder as `pulse-pack build` writes it (docs/package-format.md):
///
///     index.json                         the commit point: current manifest of everything (PackageIndex)
///     assets/<sha256>                    content-addressed blobs (0444): slide ciphertext, public images
///     sessions/<id>/<packageVersion>.json   session manifests, one file per version ever published
///     series/<id>/<packageVersion>.json     series manifests
///     appconfig/<org>/<packageVersion>.json white-label app configs
///     keys/<sessionId>/<deckVersion>.json   key tables (0600, folder 0700): never published
///     secret                             the package secret (0600), unless kept outside the package
public struct PulsePackage: Sendable {
    public let root: URL

    public init(root: URL) {
        self.root = root
    }

    public var indexURL: URL { root.appendingPathComponent("index.json") }
    public var secretURL: URL { root.appendingPathComponent("secret") }
    public var lockURL: URL { root.appendingPathComponent(".lock") }
    public var assets: BlobStore { BlobStore(folder: root.appendingPathComponent("assets")) }
    public var keysFolder: URL { root.appendingPathComponent("keys") }

    /// The kinds of published manifest, each in its own folder.
    public enum Kind: String, CaseIterable, Sendable {
        case sessions, series, appconfig
    }

    public func manifestFolder(_ kind: Kind, id: String) -> URL {
        root.appendingPathComponent(kind.rawValue).appendingPathComponent(id)
    }

    public func manifestURL(_ kind: Kind, id: String, packageVersion: String) -> URL {
        manifestFolder(kind, id: id).appendingPathComponent("\(packageVersion).json")
    }

    public func keyTableURL(sessionId: String, deckVersion: Int) -> URL {
        keysFolder.appendingPathComponent(sessionId).appendingPathComponent("\(deckVersion).json")
    }

    /// A manifest file on disk: `<kind>/<id>/<packageVersion>.json`.
    public struct ManifestFile: Sendable {
        public var kind: Kind
        public var id: String
        /// The packageVersion its name claims.
        public var packageVersion: String
        public var url: URL
        /// The path relative to the package root.
        public var path: String { "\(kind.rawValue)/\(id)/\(packageVersion).json" }
    }

    /// Every manifest file of every version, in kind, id and name order (temp files excluded).
    public func manifestFiles() -> [ManifestFile] {
        let manager = FileManager.default
        var found: [ManifestFile] = []
        for kind in Kind.allCases {
            let kindFolder = root.appendingPathComponent(kind.rawValue)
            for id in ((try? manager.contentsOfDirectory(atPath: kindFolder.path)) ?? []).sorted() where !id.hasPrefix(".") {
                let folder = kindFolder.appendingPathComponent(id)
                for file in ((try? manager.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
                where file.hasSuffix(".json") && !file.hasPrefix(".") {
                    found.append(ManifestFile(
                        kind: kind, id: id, packageVersion: String(file.dropLast(".json".count)),
                        url: folder.appendingPathComponent(file)))
                }
            }
        }
        return found
    }

    /// The manifest files `index` names as current (they may be missing: callers check).
    public func currentManifests(_ index: PackageIndex) -> [ManifestFile] {
        let entries: [(Kind, [String: String])] = [
            (.sessions, index.sessions.mapValues(\.packageVersion)),
            (.series, index.series.mapValues(\.packageVersion)),
            (.appconfig, index.appconfig.mapValues(\.packageVersion)),
        ]
        return entries.flatMap { kind, versions in
            versions.sorted { $0.key < $1.key }.map { id, version in
                ManifestFile(kind: kind, id: id, packageVersion: version, url: manifestURL(kind, id: id, packageVersion: version))
            }
        }
    }

    /// True if `root` holds a package (has an index.json of our format).
    public var exists: Bool { FileManager.default.fileExists(atPath: indexURL.path) }

    /// Reads index.json. A folder without one is an empty package.
    public func readIndex() throws -> PackageIndex {
        guard exists else { return PackageIndex() }
        let data: Data
        do { data = try Data(contentsOf: indexURL) } catch {
            throw StoreError(path: indexURL.path, "cannot read: \(AtomicFile.reason(error))")
        }
        guard let index = try? JSONDecoder().decode(PackageIndex.self, from: data) else {
            throw StoreError(path: indexURL.path, "not a pulse package index")
        }
        guard index.format == PackageIndex.currentFormat else {
            throw StoreError(path: indexURL.path, "package format \"\(index.format)\" is not \(PackageIndex.currentFormat)")
        }
        return index
    }

    /// Replaces index.json atomically: the last step of a build.
    public func writeIndex(_ index: PackageIndex) throws {
        try AtomicFile.write(Self.encoder.encode(index) + [0x0a], to: indexURL, mode: 0o644)
    }

    /// Reads a published manifest.
    public func readManifest(_ kind: Kind, id: String, packageVersion: String) throws -> JSONValue {
        let url = manifestURL(kind, id: id, packageVersion: packageVersion)
        do {
            return try JSONValue.parse(Data(contentsOf: url))
        } catch {
            throw StoreError(path: url.path, "cannot read manifest: \(error)")
        }
    }

    /// Writes a manifest under its packageVersion (a no-op when that version already exists intact).
    /// - Returns: true if the file was created.
    @discardableResult
    public func writeManifest(_ kind: Kind, id: String, manifest: JSONValue, packageVersion: String) throws -> Bool {
        let folder = manifestFolder(kind, id: id)
        try AtomicFile.makeFolder(folder)
        let url = manifestURL(kind, id: id, packageVersion: packageVersion)
        let bytes = manifest.prettyBytes
        if let existing = try? Data(contentsOf: url), existing.elementsEqual(bytes) { return false }
        try AtomicFile.write(bytes, to: url, mode: 0o644)
        return true
    }

    /// Reads a key table.
    public func readKeyTable(at url: URL) throws -> KeyTable {
        do {
            return try JSONDecoder().decode(KeyTable.self, from: Data(contentsOf: url))
        } catch {
            throw StoreError(path: url.path, "not a readable key table: \(error)")
        }
    }

    /// Writes a key table, mode 0600 in a 0700 folder.
    public func writeKeyTable(_ table: KeyTable) throws {
        try writeKeyFile(table.fileBytes, to: keyTableURL(sessionId: table.sessionId, deckVersion: table.deckVersion))
    }

    /// Writes a file of key material at `url` in `keys/<sessionId>/` (a key table, sealed or not),
    /// atomically, mode 0600, creating the folders 0700.
    public func writeKeyFile(_ bytes: [UInt8], to url: URL) throws {
        try AtomicFile.makeFolder(keysFolder, mode: 0o700)
        try AtomicFile.makeFolder(url.deletingLastPathComponent(), mode: 0o700)
        try AtomicFile.write(bytes, to: url, mode: 0o600)
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return encoder
    }()
}
