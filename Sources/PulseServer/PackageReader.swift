import Foundation
import PulseAge
import PulseCore
import PulseCrypto
import PulseServerStorage

/// Reads a package's server part (docs/package-format.md) into an `ImportPlan`, checking everything
/// before anything is written: each manifest hashes to its packageVersion, each key table belongs to
/// the package and matches its manifest's slides, each gated file matches its manifest's gated
/// entries, each series ref names a session of this package at its current version.
///
/// Errors are `InputError`s naming the file and the field (never quoting a key).
public struct PackageReader {
    public static let format = "pulse-package/2"
    /// No file of a server part is anywhere near this; a bigger one is not ours.
    static let maximumFileBytes = 64 << 20

    /// The server part's folder (`PACKAGE/server`, or PACKAGE itself when it is a copied server part).
    public let root: URL
    let identities: [AgeIdentity]

    /// Finds the server part of `package`.
    /// - Throws: `InputError` when there is none, or the package has the old layout.
    public init(package: URL, identities: [AgeIdentity] = []) throws {
        self.identities = identities
        let nested = package.appendingPathComponent("server")
        if FileManager.default.fileExists(atPath: nested.appendingPathComponent("index.json").path) {
            root = nested
            return
        }
        let index = package.appendingPathComponent("index.json")
        guard FileManager.default.fileExists(atPath: index.path) else {
            throw InputError(file: package.path, "not a package's server part (no server/index.json or index.json)")
        }
        if let format = (try? JSONValue.parse(Data(contentsOf: index)))?["format"]?.stringValue, format == "pulse-package/1" {
            throw InputError(file: index.path, "a pulse-package/1 package has no server part; run pulse-pack build on it to migrate it")
        }
        root = package
    }

    /// Reads and checks the whole server part.
    public func read() throws -> ImportPlan {
        let indexFile = file("index.json")
        let warnings = Warnings()
        let indexValue = try parse(indexFile)
        let index = try JSONReader(file: indexFile.path, value: indexValue, warnings: warnings)
        let format = try index.string("format")
        guard format == Self.format else {
            throw index.error("format", "expected \"\(Self.format)\", found \"\(format)\"")
        }
        let packageText = try index.string("packageId", matching: Self.packageIdFormat, what: "32 lowercase hex digits")
        guard let packageId = PackageID(packageText) else { throw index.error("packageId", "expected 32 lowercase hex digits") }
        let sessionEntries = try entries(indexValue, "sessions", file: indexFile)
        let seriesEntries = try entries(indexValue, "series", file: indexFile)

        var sessions: [SessionImport] = []
        var versions: [String: String] = [:]
        for (id, entry) in sessionEntries {
            let reader = try JSONReader(file: indexFile.path, value: entry, warnings: warnings)
            let packageVersion = try reader.string("packageVersion", matching: Self.digestFormat, what: "64 lowercase hex digits")
            let deckVersion = try reader.int("deckVersion", in: 1...Int(Int32.max))
            // `gated` names the current gated file by the SHA-256 of its bytes; absent: none.
            let gated = try reader.optionalString("gated", matching: Self.digestFormat, what: "the gated file's SHA-256 (64 lowercase hex digits)")
            sessions.append(try readSession(id: id, packageVersion: packageVersion, deckVersion: deckVersion, gated: gated, packageId: packageId))
            versions[id] = packageVersion
        }
        var series: [SeriesImport] = []
        for (id, entry) in seriesEntries {
            let reader = try JSONReader(file: indexFile.path, value: entry, warnings: warnings)
            let packageVersion = try reader.string("packageVersion", matching: Self.digestFormat, what: "64 lowercase hex digits")
            series.append(try readSeries(id: id, packageVersion: packageVersion, sessionVersions: versions))
        }
        return ImportPlan(packageId: packageId, sessions: sessions, series: series)
    }

    /// `sessions` or `series` of the index: id → entry, ids checked, sorted for a stable order.
    private func entries(_ index: JSONValue, _ key: String, file url: URL) throws -> [(String, JSONValue)] {
        guard let value = index[key], value != .null else { return [] }
        guard case let .object(fields) = value else { throw InputError(file: url.path, path: key, "expected an object") }
        for id in fields.keys where !Identifier.isValid(id) {
            throw InputError(file: url.path, path: "\(key).\(id)", "not a valid id ([a-z0-9][a-z0-9-]{0,63})")
        }
        return fields.sorted { $0.key < $1.key }
    }

    // MARK: - Files

    func file(_ relative: String) -> URL { root.appendingPathComponent(relative) }

    func bytes(_ url: URL) throws -> [UInt8] {
        let attributes: [FileAttributeKey: Any]
        do { attributes = try FileManager.default.attributesOfItem(atPath: url.path) } catch {
            throw InputError(file: url.path, "missing (the index names it)")
        }
        if let size = attributes[.size] as? Int, size > Self.maximumFileBytes {
            throw InputError(file: url.path, "\(size) bytes; no file of a package's server part is over \(Self.maximumFileBytes)")
        }
        do { return Array(try Data(contentsOf: url)) } catch {
            throw InputError(file: url.path, "cannot read: \((error as NSError).localizedDescription)")
        }
    }

    func parse(_ url: URL) throws -> JSONValue {
        try parse(bytes(url), name: url.path)
    }

    func parse(_ bytes: [UInt8], name: String) throws -> JSONValue {
        do { return try JSONValue.parse(Data(bytes)) } catch {
            throw InputError(file: name, "not valid JSON")
        }
    }

    static let digestFormat = TextFormat { $0.many(upTo: 64, Identifier.isLowerHex) == 64 }
    static let packageIdFormat = TextFormat { $0.many(upTo: 32, Identifier.isLowerHex) == 32 }
}
