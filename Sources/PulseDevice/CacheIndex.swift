import Foundation
import PulseCore
import PulseStore

/// `cache.json`: the cache's commit point. It names, for each cached manifest (`session/<id>`,
/// `series/<id>`), the file holding its exact bytes (`manifests/<sha256>`), the ETag it came with and when.
/// A sync writes blobs and the manifest file first, then replaces this file in one rename: a sync killed
/// at any moment leaves either the previous index, whose files are all still there, or the new one.
///
/// ```json
/// {"format": "pulse-device-cache/1",
///  "manifests": {"session/keynote": {"etag": "\"8994d8d6…\"", "file": "<sha256>", "fetchedAt": "2026-12-03T08:42:10Z"}}}
/// ```
public struct CacheIndex: Equatable {
    static let format = "pulse-device-cache/1"

    struct Entry: Equatable {
        var etag: String?
        var file: String
        var fetchedAt: String
    }

    var entries: [String: Entry] = [:]

    static func sessionKey(_ id: String) -> String { "session/" + id }
    static func seriesKey(_ id: String) -> String { "series/" + id }

    static func read(_ url: URL) throws -> CacheIndex {
        guard FileManager.default.fileExists(atPath: url.path) else { return CacheIndex() }
        let value: JSONValue
        do { value = try JSONValue.parse(try Data(contentsOf: url), file: url.path) } catch {
            throw DeviceError(.storage, "\(url.path) cannot be read (\(error)); remove it to start the cache afresh")
        }
        guard value["format"]?.stringValue == format, let manifests = value["manifests"]?.objectValue else {
            throw DeviceError(.storage, "\(url.path) is not a \(format) index; remove it to start the cache afresh")
        }
        var index = CacheIndex()
        for (key, entry) in manifests {
            guard let file = entry["file"]?.stringValue else { continue }
            index.entries[key] = Entry(etag: entry["etag"]?.stringValue, file: file, fetchedAt: entry["fetchedAt"]?.stringValue ?? "")
        }
        return index
    }

    func write(_ url: URL) throws {
        var manifests: [String: JSONValue] = [:]
        for (key, entry) in entries {
            var fields: [String: JSONValue] = ["file": .string(entry.file), "fetchedAt": .string(entry.fetchedAt)]
            if let etag = entry.etag { fields["etag"] = .string(etag) }
            manifests[key] = .object(fields)
        }
        let bytes = JSONValue.object(["format": .string(Self.format), "manifests": .object(manifests)]).prettyBytes
        do { try AtomicFile.write(bytes, to: url, mode: 0o600) } catch { throw DeviceError(.storage, "cannot write \(url.path): \(error)") }
    }
}
