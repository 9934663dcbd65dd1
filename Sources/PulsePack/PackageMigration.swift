import Foundation
import PulseCore
import PulseCrypto
import PulseStore
import PulseSystem

/// Moves a `pulse-package/1` folder (index.json, assets/, sessions/, series/, appconfig/, keys/ and the
/// secret at the top) to the `pulse-package/2` layout, in place, under the build lock.
///
/// Every step is a rename or a new file, and each is skipped when a run killed earlier already did it,
/// so a migration stopped at any step boundary is finished by the next build:
///
///  1. `.migration` records the new package id (so a resumed run keeps it);
///  2. the secret is written to its new home (`PackageSecret.defaultURL`), 3. then removed from the folder;
///  4. `public/` and `server/` (0700) are created;
///  5–9. `assets`, `appconfig` → `public/`; `sessions`, `series`, `keys` → `server/` (renames);
///  10. a blob list per manifest version and `public/index.json`;
///  11. `server/index.json`: from here on the folder is a `pulse-package/2` package;
///  12. the old `index.json`, 13. then `.migration` are removed.
///
/// History keeps every manifest version the folder held, newest first by file time, the current one first.
/// Old versions have no gated resources (pulse-package/1 dropped them). A reader other than the build
/// (pulse-origin, a push) sees a broken folder between steps 5 and 11: stop them, or restart them after.
struct PackageMigration {
    let package: PulsePackage
    /// The id to give the package (`--package-id`); random when nil.
    let packageId: PackageID?
    let environment: [String: String]
    /// Called after each step with its number (tests stop the migration there).
    var afterStep: (Int) throws -> Void = { _ in }

    var markerURL: URL { package.root.appendingPathComponent(".migration") }

    /// True if `package` is a `pulse-package/1` folder or a migration of one is unfinished.
    static func isNeeded(_ package: PulsePackage) throws -> Bool {
        let manager = FileManager.default
        return try package.layout() == .legacy
            || manager.fileExists(atPath: package.root.appendingPathComponent(".migration").path)
            || (package.exists && manager.fileExists(atPath: package.legacyIndexURL.path))
    }

    /// Runs (or finishes) the migration; returns the package id.
    @discardableResult
    func run() throws -> PackageID {
        let id = try markPackageId()
        try afterStep(1)
        try copySecret(to: PackageSecret.defaultURL(packageId: id, environment: environment))
        try afterStep(2)
        try remove(package.legacySecretURL)
        try afterStep(3)
        try package.makePartFolders(for: package.publicRoot)
        try package.makePartFolders(for: package.serverRoot)
        try afterStep(4)
        let moves: [(String, URL)] = [
            ("assets", package.publicRoot), ("appconfig", package.publicRoot),
            ("sessions", package.serverRoot), ("series", package.serverRoot), ("keys", package.serverRoot),
        ]
        for (step, (name, part)) in moves.enumerated() {
            try move(name, into: part)
            try afterStep(5 + step)
        }
        if !package.exists {
            let index = try migratedIndex(packageId: id)
            try writeBlobLists(index)
            try package.publicPart.writeIndex(index.publicIndex)
            try afterStep(10)
            try package.writeServerIndex(index)
        }
        try afterStep(11)
        try remove(package.legacyIndexURL)
        try afterStep(12)
        try remove(markerURL)
        try afterStep(13)
        return id
    }

    /// Step 1: the id this migration gives the package, recorded before anything moves.
    private func markPackageId() throws -> PackageID {
        if let data = try? Data(contentsOf: markerURL) {
            guard let id = (try? JSONValue.parse(data))?["packageId"]?.stringValue.flatMap(PackageID.init) else {
                throw StoreError(path: markerURL.path, "unreadable migration record; remove it and build again")
            }
            return id
        }
        if let index = try? package.readIndex() { return index.packageId }  // finished but for the last steps
        let id = try packageId ?? PackageID.random()
        try AtomicFile.write(JSONValue.object(["packageId": .string(id.hex)]).prettyBytes, to: markerURL, mode: 0o600)
        return id
    }

    /// Step 2: the secret is written to its default home (step 3 removes it from the package folder).
    private func copySecret(to home: URL?) throws {
        let source = package.legacySecretURL
        guard FileManager.default.fileExists(atPath: source.path) else { return }
        guard let home else {
            throw InputError(file: source.path, "the package secret must move out of the package folder, and there is no place "
                + "for it: set XDG_CONFIG_HOME or HOME")
        }
        let bytes = try Data(contentsOf: source)
        let secret: SecretBytes
        do { secret = try PackageSecret.read(source, what: "package secret") } catch let error as InputError {
            // A secret others could read is still moved (and made private): it was the package's.
            guard error.message.contains("readable by others"), let decoded = Data(base64Encoded: String(decoding: bytes, as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)), decoded.count == SlideCipher.secretByteCount else { throw error }
            secret = SecretBytes(decoded)
        }
        if let existing = try PackageSecret.create(secret, at: home), !existing.isEqual(to: secret) {
            throw StoreError(path: home.path, "holds another secret for this package id; move \(source.path) away by hand")
        }
    }

    private func move(_ name: String, into part: URL) throws {
        let source = package.root.appendingPathComponent(name)
        let destination = part.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: source.path) else { return }
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw StoreError(path: destination.path, "exists, and so does \(source.path): move one of them away by hand")
        }
        try StoreError.wrapping { () throws(PathError) in try FileSystem.rename(source.path, to: destination.path) }
        try AtomicFile.syncFolder(part)
        try AtomicFile.syncFolder(package.root)
    }

    private func remove(_ url: URL) throws {
        do throws(PathError) { try FileSystem.removeIfPresent(url.path) } catch {
            throw StoreError.system(url.path, "cannot remove", errno: error.errno)
        }
    }

    /// The index the old one becomes: its current versions and deck state, and a history made of every
    /// manifest file (current first, then newest first by file time), with publish times from the files.
    private func migratedIndex(packageId: PackageID) throws -> PackageIndex {
        let data: Data
        do { data = try Data(contentsOf: package.legacyIndexURL) } catch {
            throw StoreError(path: package.legacyIndexURL.path, "cannot read: \(Errno.describe(error))")
        }
        guard let old = try? JSONValue.decode(LegacyIndex.self, from: data), old.format == PackageIndex.legacyFormat else {
            throw StoreError(path: package.legacyIndexURL.path, "not a readable \(PackageIndex.legacyFormat) index")
        }
        var index = PackageIndex(
            packageId: packageId,
            sessions: old.sessions.mapValues {
                .init(packageVersion: $0.packageVersion, deckVersion: $0.deckVersion, deckDigest: $0.deckDigest,
                      highestDeckVersion: $0.highestDeckVersion)
            },
            series: old.series, appconfig: old.appconfig)
        let current: [DocumentKind: [String: String]] = [
            .sessions: old.sessions.mapValues(\.packageVersion), .series: old.series.mapValues(\.packageVersion),
            .appconfig: old.appconfig.mapValues(\.packageVersion),
        ]
        var byDocument: [String: [(file: PulsePackage.ManifestFile, modified: Date)]] = [:]
        for file in package.manifestFiles() {
            let modified = (try? FileManager.default.attributesOfItem(atPath: file.url.path)[.modificationDate] as? Date) ?? nil
            byDocument[PackageIndex.historyKey(file.kind, file.id), default: []].append((file, modified ?? Date(timeIntervalSince1970: 0)))
        }
        for (key, files) in byDocument {
            let kind = files[0].file.kind, id = files[0].file.id
            let ordered = files.sorted { a, b in
                let (aCurrent, bCurrent) = (current[kind]?[id] == a.file.packageVersion, current[kind]?[id] == b.file.packageVersion)
                if aCurrent != bCurrent { return aCurrent }
                if a.modified != b.modified { return a.modified > b.modified }
                return a.file.packageVersion > b.file.packageVersion
            }
            index.history[key] = try ordered.map { file, modified in
                let manifest = try package.readManifest(kind, id: id, packageVersion: file.packageVersion)
                return .init(packageVersion: file.packageVersion, refs: BlobList(manifest: manifest).name, publishedAt: Timestamp.string(modified))
            }
        }
        return index
    }

    /// Step 10: a blob list for every manifest version.
    private func writeBlobLists(_ index: PackageIndex) throws {
        for file in package.manifestFiles() {
            try package.writeBlobList(BlobList(manifest: try package.readManifest(file.kind, id: file.id, packageVersion: file.packageVersion)))
        }
    }

    /// `index.json` of `pulse-package/1`.
    private struct LegacyIndex: Decodable {
        struct Session: Decodable {
            var packageVersion: String
            var deckVersion: Int
            var deckDigest: String
            var highestDeckVersion: Int
        }
        var format: String
        var sessions: [String: Session]
        var series: [String: PackageIndex.Document]
        var appconfig: [String: PackageIndex.Document]
    }
}
