import Foundation
import PulseAge
import PulseCore
import PulseServerStorage

extension PackageReader {
    /// A manifest's slide: what its key table must match.
    struct ManifestSlide {
        var n: Int
        var assetHash: Digest
    }

    func readSession(id: String, packageVersion: String, deckVersion: Int, gated: String?, packageId: PackageID) throws -> SessionImport {
        let url = file("sessions/\(id)/\(packageVersion).json")
        let manifest = try parse(url)
        try checkVersion(manifest, packageVersion: packageVersion, file: url)
        guard manifest["session"]?["id"]?.stringValue == id else {
            throw InputError(file: url.path, path: "session.id", "expected \"\(id)\" (the session the index names)")
        }
        guard manifest["deckVersion"]?.intValue == deckVersion else {
            throw InputError(file: url.path, path: "deckVersion", "expected \(deckVersion) (the index's deckVersion)")
        }
        let slides = try manifestSlides(manifest, file: url)
        let gatedEntries = try gatedMetadata(manifest, file: url)
        var resources: [GatedResource] = []
        if let gated {
            resources = try readGated(id: id, name: gated, packageVersion: packageVersion, slideCount: slides.count, metadata: gatedEntries)
        } else if !gatedEntries.isEmpty {
            throw InputError(file: url.path, path: "resources", "has gated resources, but index.json names no gated file for the session")
        }
        let keyTable = try readKeyTable(id: id, deckVersion: deckVersion, packageId: packageId, slides: slides)
        var seriesId: String? = nil
        if case let .string(series)? = manifest["session"]?["seriesId"] { seriesId = series }
        return SessionImport(
            id: id, seriesId: seriesId, packageVersion: packageVersion, deckVersion: deckVersion, slideCount: slides.count,
            manifest: manifest.prettyBytes, gated: resources, keyTable: keyTable)
    }

    /// The manifest's `packageVersion` field and its content hash must both be the version its name says.
    func checkVersion(_ manifest: JSONValue, packageVersion: String, file url: URL) throws {
        guard manifest["packageVersion"]?.stringValue == packageVersion else {
            throw InputError(file: url.path, path: "packageVersion", "expected \(packageVersion) (the file's name)")
        }
        let computed = PackageVersion.of(manifest)
        guard computed == packageVersion else {
            throw InputError(file: url.path, "content hashes to packageVersion \(computed), not \(packageVersion): the file was changed")
        }
    }

    func manifestSlides(_ manifest: JSONValue, file url: URL) throws -> [ManifestSlide] {
        guard case let .array(items)? = manifest["slides"] else { throw InputError(file: url.path, path: "slides", "missing (expected an array)") }
        return try items.enumerated().map { index, item in
            guard item["n"]?.intValue == index else { throw InputError(file: url.path, path: "slides[\(index)].n", "expected \(index)") }
            guard let hash = item["assetHash"]?.digestValue else {
                throw InputError(file: url.path, path: "slides[\(index)].assetHash", "expected 64 lowercase hex digits")
            }
            return ManifestSlide(n: index, assetHash: hash)
        }
    }

    /// The manifest's gated entries (`gated: true`) by id: `{ id, title, kind }`.
    func gatedMetadata(_ manifest: JSONValue, file url: URL) throws -> [String: JSONValue] {
        guard let resources = manifest["resources"] else { return [:] }
        guard case let .array(items) = resources else { throw InputError(file: url.path, path: "resources", "expected an array") }
        var gated: [String: JSONValue] = [:]
        for (index, item) in items.enumerated() where item["gated"] == .bool(true) {
            guard let id = item["id"]?.stringValue else { throw InputError(file: url.path, path: "resources[\(index)].id", "missing") }
            guard gated.updateValue(item, forKey: id) == nil else {
                throw InputError(file: url.path, path: "resources[\(index)].id", "\"\(id)\" is gated twice")
            }
        }
        return gated
    }

    func readSeries(id: String, packageVersion: String, sessionVersions: [String: String]) throws -> SeriesImport {
        let url = file("series/\(id)/\(packageVersion).json")
        let manifest = try parse(url)
        try checkVersion(manifest, packageVersion: packageVersion, file: url)
        guard manifest["series"]?["id"]?.stringValue == id else {
            throw InputError(file: url.path, path: "series.id", "expected \"\(id)\" (the series the index names)")
        }
        guard case let .array(refs)? = manifest["sessions"] else { throw InputError(file: url.path, path: "sessions", "missing (expected an array)") }
        let sessionIds = try refs.enumerated().map { index, ref in
            guard let session = ref["id"]?.stringValue, let current = sessionVersions[session] else {
                throw InputError(file: url.path, path: "sessions[\(index)].id", "names no session of this package")
            }
            guard ref["packageVersion"]?.stringValue == current else {
                throw InputError(file: url.path, path: "sessions[\(index)].packageVersion", "expected \(current), the current version of \(session)")
            }
            return session
        }
        return SeriesImport(id: id, packageVersion: packageVersion, manifest: manifest.prettyBytes, sessionIds: sessionIds)
    }
}
