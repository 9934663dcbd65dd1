import Foundation
import PulseCore
import PulseSystem

/// A package folder as `pulse-pack build` writes it (`pulse-package/2`, docs/package-format.md), laid out
/// by audience:
///
///     public/                                 → a CDN, S3 or pulse-origin (`PublicFolder`)
///       index.json                            the public commit point (`PublicIndex`)
///       assets/<sha256>                       blobs (0444): slide ciphertext, public images
///       appconfig/<org>/<packageVersion>.json app configs (public by contract)
///       refs/<sha256>.json                    per-version blob lists (`BlobList`)
///     server/                                 → the sync server only (0700)
///       index.json                            the build's commit point (`PackageIndex`)
///       sessions/<id>/<packageVersion>.json   session manifests
///       series/<id>/<packageVersion>.json     series manifests
///       gated/<sessionId>/<sha256>.json       gated resources with content and release rule (0600)
///       keys/<sessionId>/<deckVersion>.json   key tables (0600 in 0700 folders), or .json.age
///     .lock                                   the build lock
///
/// The package secret is in neither part (by default under the user's config folder, see PackageSecret).
public struct PulsePackage: Sendable {
    public let root: URL

    public init(root: URL) {
        self.root = root
    }

    public typealias Kind = DocumentKind

    public var publicRoot: URL { root.appendingPathComponent("public") }
    public var serverRoot: URL { root.appendingPathComponent("server") }
    /// The public part, as push and pulse-origin read it.
    public var publicPart: PublicFolder { PublicFolder(root: publicRoot) }

    /// `server/index.json`: the commit point of a build.
    public var indexURL: URL { serverRoot.appendingPathComponent("index.json") }
    public var publicIndexURL: URL { publicPart.indexURL }
    public var lockURL: URL { root.appendingPathComponent(".lock") }
    public var assets: BlobStore { publicPart.assets }
    public var keysFolder: URL { serverRoot.appendingPathComponent("keys") }
    public var gatedFolder: URL { serverRoot.appendingPathComponent("gated") }
    public var refsFolder: URL { publicPart.refsFolder }

    /// `pulse-package/1` (one folder: index.json, assets/, sessions/, series/, appconfig/, keys/, secret).
    public var legacyIndexURL: URL { root.appendingPathComponent("index.json") }
    public var legacySecretURL: URL { root.appendingPathComponent("secret") }

    /// Where a kind's manifests live: sessions and series in `server/`, app configs in `public/`.
    public func kindFolder(_ kind: Kind) -> URL {
        (kind.isPublic ? publicRoot : serverRoot).appendingPathComponent(kind.rawValue)
    }

    public func manifestFolder(_ kind: Kind, id: String) -> URL { kindFolder(kind).appendingPathComponent(id) }

    public func manifestURL(_ kind: Kind, id: String, packageVersion: String) -> URL {
        manifestFolder(kind, id: id).appendingPathComponent("\(packageVersion).json")
    }

    public func keyTableURL(sessionId: String, deckVersion: Int) -> URL {
        keysFolder.appendingPathComponent(sessionId).appendingPathComponent("\(deckVersion).json")
    }

    public func gatedURL(sessionId: String, name: String) -> URL {
        gatedFolder.appendingPathComponent(sessionId).appendingPathComponent("\(name).json")
    }

    public func refsURL(_ name: String) -> URL { publicPart.refsURL(name) }

    // MARK: - What the folder is

    /// What a folder holds, judged by its entries.
    public enum Layout: Equatable, Sendable {
        /// No such folder.
        case missing
        /// A folder with nothing of a package in it (at most a lock file and abandoned temp files).
        case empty
        /// `pulse-package/2`: public/ and server/ (perhaps before its first commit).
        case current
        /// `pulse-package/1`, or one whose migration was interrupted.
        case legacy
        /// Something else: the entry that shows it.
        case foreign(String)
    }

    /// (`secret` is not one of them, but a package with a stray secret at its top is still a package:
    /// verify reports it and build warns, rather than calling the folder foreign.)
    static let currentEntries: Set<String> = ["public", "server", ".lock", ".migration", "secret"]
    static let legacyEntries: Set<String> = ["index.json", "assets", "sessions", "series", "appconfig", "keys", "secret", ".lock", ".migration"]

    public func layout() throws -> Layout {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isFolder) else { return .missing }
        guard isFolder.boolValue else { return .foreign(root.lastPathComponent) }
        let entries: [String]
        do { entries = try FileManager.default.contentsOfDirectory(atPath: root.path) } catch {
            throw StoreError(path: root.path, "cannot list the folder (\(Errno.describe(error)))")
        }
        let names = Set(entries.filter { !$0.hasPrefix(".tmp-") })
        if FileManager.default.fileExists(atPath: legacyIndexURL.path) && !FileManager.default.fileExists(atPath: indexURL.path) {
            if let stranger = names.subtracting(Self.legacyEntries.union(Self.currentEntries)).sorted().first { return .foreign(stranger) }
            return .legacy
        }
        if let stranger = names.subtracting(Self.currentEntries.union(["index.json"])).sorted().first {
            return .foreign(stranger)
        }
        if names.contains("public") || names.contains("server") { return .current }
        return names.subtracting([".lock"]).isEmpty ? .empty : .foreign(names.sorted()[0])
    }

    /// The one-line reason a command that does not migrate refuses a `pulse-package/1` folder.
    public var legacyMessage: String {
        "is a pulse-package/1 package (manifests and the secret next to the blobs): "
            + "run pulse-pack build <input> --out \(root.path) once to move it to the pulse-package/2 layout"
    }

    // MARK: - Indexes

    /// True if the build has committed at least once (`server/index.json` exists).
    public var exists: Bool { FileManager.default.fileExists(atPath: indexURL.path) }

    /// Reads `server/index.json`; nil if there is none yet.
    public func readIndexIfPresent() throws -> PackageIndex? {
        guard exists else { return nil }
        return try readIndex()
    }

    /// Reads `server/index.json`.
    /// - Throws: `StoreError` if it is missing, unreadable or not a `pulse-package/2` index.
    public func readIndex() throws -> PackageIndex {
        let data: Data
        do { data = try Data(contentsOf: indexURL) } catch {
            if !exists, FileManager.default.fileExists(atPath: legacyIndexURL.path) { throw StoreError(path: root.path, legacyMessage) }
            throw StoreError(path: indexURL.path, "cannot read: \(Errno.describe(error))")
        }
        let json: JSONValue
        do { json = try JSONValue.parse(data) } catch { throw StoreError(json: error, path: indexURL.path) }
        let format = json["format"]?.stringValue
        guard format == PackageIndex.currentFormat else {
            throw StoreError(path: indexURL.path, format.map { "package format \"\($0)\" is not \(PackageIndex.currentFormat)" }
                ?? "not a pulse package index")
        }
        guard let index = try? json.decode(PackageIndex.self) else {
            throw StoreError(path: indexURL.path, "not a readable \(PackageIndex.currentFormat) index")
        }
        return index
    }

    /// Writes both commit points: `public/index.json` (the projection) first, then `server/index.json`,
    /// each replaced atomically. A public index ahead of the server index names only files that exist.
    public func writeIndexes(_ index: PackageIndex) throws {
        try publicPart.writeIndex(index.publicIndex)
        try writeServerIndex(index)
    }

    /// Replaces `server/index.json` atomically.
    public func writeServerIndex(_ index: PackageIndex) throws {
        try AtomicFile.write(index.fileBytes, to: indexURL, mode: 0o644)
    }

    // MARK: - Manifests

    /// A manifest file on disk: `<kind>/<id>/<packageVersion>.json`.
    public struct ManifestFile: Sendable {
        public var kind: Kind
        public var id: String
        /// The packageVersion its name claims.
        public var packageVersion: String
        public var url: URL
        /// The path relative to its part (`server/` or `public/`).
        public var path: String { "\(kind.rawValue)/\(id)/\(packageVersion).json" }
    }

    /// Every manifest file of every version, in kind, id and name order (temp files excluded).
    public func manifestFiles() -> [ManifestFile] {
        let manager = FileManager.default
        var found: [ManifestFile] = []
        for kind in Kind.allCases {
            let kindFolder = kindFolder(kind)
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

    /// Reads a published manifest.
    public func readManifest(_ kind: Kind, id: String, packageVersion: String) throws -> JSONValue {
        let url = manifestURL(kind, id: id, packageVersion: packageVersion)
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw StoreError(path: url.path, "cannot read manifest: \(Errno.describe(error))") }
        do { return try JSONValue.parse(data) } catch { throw StoreError(json: error, path: url.path) }
    }

    /// Writes a manifest under its packageVersion (a no-op when that version already exists intact).
    /// - Returns: true if the file was created.
    @discardableResult
    public func writeManifest(_ kind: Kind, id: String, manifest: JSONValue, packageVersion: String) throws -> Bool {
        try makePartFolders(for: kind.isPublic ? publicRoot : serverRoot)
        try AtomicFile.makeFolder(kindFolder(kind), mode: kind.isPublic ? 0o755 : 0o700)
        return try Self.writeOnce(manifest.prettyBytes, to: manifestURL(kind, id: id, packageVersion: packageVersion), mode: 0o644)
    }

    /// Writes a blob list as `public/refs/<name>.json`; true if the file was created.
    @discardableResult
    public func writeBlobList(_ list: BlobList) throws -> Bool {
        try makePartFolders(for: publicRoot)
        return try Self.writeOnce(list.fileBytes, to: refsURL(list.name), mode: 0o644)
    }

    /// Writes a session's gated resources as `server/gated/<sessionId>/<name>.json` (0600); true if created.
    @discardableResult
    public func writeGated(_ gated: GatedResources) throws -> Bool {
        try makePartFolders(for: serverRoot)
        try AtomicFile.makeFolder(gatedFolder, mode: 0o700)
        return try Self.writeOnce(gated.fileBytes, to: gatedURL(sessionId: gated.sessionId, name: gated.name), mode: 0o600)
    }

    /// Creates `public/` (0755) or `server/` (0700) if missing.
    public func makePartFolders(for part: URL) throws {
        try AtomicFile.makeFolder(root)
        try AtomicFile.makeFolder(part, mode: part == serverRoot ? 0o700 : 0o755)
    }

    /// Writes `bytes` at `url` (creating its folder like its parent) unless an identical file is there.
    static func writeOnce(_ bytes: [UInt8], to url: URL, mode: mode_t) throws -> Bool {
        let folder = url.deletingLastPathComponent()
        let parentMode = (try? FileInfo.of(folder.deletingLastPathComponent().path)).map { $0.permissions & 0o777 } ?? 0o755
        try AtomicFile.makeFolder(folder, mode: parentMode)
        if let existing = try? Data(contentsOf: url), existing.elementsEqual(bytes) { return false }
        try AtomicFile.write(bytes, to: url, mode: mode)
        return true
    }

    // MARK: - Key tables

    /// Reads a key table.
    public func readKeyTable(at url: URL) throws -> KeyTable {
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw StoreError(path: url.path, "cannot read key table: \(Errno.describe(error))") }
        // Positions only, never a message that could quote part of a key.
        do { return try JSONValue.decode(KeyTable.self, from: data) } catch let error as JSONValue.SyntaxError {
            throw StoreError(path: "\(url.path):\(error.line):\(error.column)", "not a readable key table (not valid JSON)")
        } catch {
            throw StoreError(path: url.path, "not a readable key table (expected {sessionId, deckVersion, packageVersion, slides})")
        }
    }

    /// Writes a key table, mode 0600 in a 0700 folder.
    public func writeKeyTable(_ table: KeyTable) throws {
        try writeKeyFile(table.fileBytes, to: keyTableURL(sessionId: table.sessionId, deckVersion: table.deckVersion))
    }

    /// Writes a file of key material at `url` in `server/keys/<sessionId>/` (a key table, sealed or not),
    /// atomically, mode 0600, creating the folders 0700.
    public func writeKeyFile(_ bytes: [UInt8], to url: URL) throws {
        try makePartFolders(for: serverRoot)
        try AtomicFile.makeFolder(keysFolder, mode: 0o700)
        try AtomicFile.makeFolder(url.deletingLastPathComponent(), mode: 0o700)
        try AtomicFile.write(bytes, to: url, mode: 0o600)
    }

    /// Sets `server/`, `server/keys/`, `server/gated/` and every session folder in them to 0700 where they
    /// are looser (an older pulse-pack, a copy, a umask): key material is never readable by others.
    public func tightenPrivateFolders() throws {
        let manager = FileManager.default
        var folders = [serverRoot, keysFolder, gatedFolder]
        for parent in [keysFolder, gatedFolder] {
            folders += ((try? manager.contentsOfDirectory(atPath: parent.path)) ?? []).map { parent.appendingPathComponent($0) }
        }
        for folder in folders {
            guard let info = try? FileInfo.ofLink(folder.path), info.isFolder, info.permissions & 0o077 != 0 else { continue }
            do throws(PathError) { try FileSystem.setPermissions(folder.path, info.permissions & 0o700) } catch {
                throw StoreError.system(folder.path, "cannot make the folder private (chmod 700)", errno: error.errno)
            }
        }
    }
}
