import Foundation
import PulseCore
import PulseCrypto
import PulseSystem

/// The public part of a package: `<package>/public/`, or a folder `push` wrote (the same files at its top).
/// What a CDN, S3 or pulse-origin holds: ciphertext blobs, public images, app configs, per-version blob
/// lists and the public index, and nothing device-scoped.
public struct PublicFolder: Sendable {
    public let root: URL

    public init(root: URL) {
        self.root = root
    }

    /// `url/public` when `url` is a package folder that has one, else `url` itself (a pushed folder).
    public static func locate(_ url: URL) -> PublicFolder {
        let inside = url.appendingPathComponent("public")
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: inside.path, isDirectory: &isFolder), isFolder.boolValue {
            return PublicFolder(root: inside)
        }
        return PublicFolder(root: url)
    }

    public var indexURL: URL { root.appendingPathComponent("index.json") }
    public var assets: BlobStore { BlobStore(folder: root.appendingPathComponent("assets")) }
    public var refsFolder: URL { root.appendingPathComponent("refs") }

    public func refsURL(_ name: String) -> URL { refsFolder.appendingPathComponent("\(name).json") }

    /// An app config file (`appconfig/<org>/<packageVersion>.json`); only app configs are public.
    public func manifestURL(_ kind: DocumentKind, id: String, packageVersion: String) -> URL {
        precondition(kind.isPublic, "only app configs are in the public part")
        return root.appendingPathComponent(kind.rawValue).appendingPathComponent(id).appendingPathComponent("\(packageVersion).json")
    }

    /// True if the folder has an index.json.
    public var exists: Bool { FileManager.default.fileExists(atPath: indexURL.path) }

    /// Reads and checks index.json: the one place the public index is parsed.
    /// - Throws: `StoreError` if it is missing, unreadable or not a `pulse-public/1` index.
    public func readIndex() throws -> PublicIndex {
        let data: Data
        do { data = try Data(contentsOf: indexURL) } catch {
            throw StoreError(path: indexURL.path, "cannot read: \(Errno.describe(error))")
        }
        return try Self.parseIndex(data, path: indexURL.path)
    }

    /// Parses public index bytes read from anywhere (a folder, an S3 object); `path` names them in errors.
    public static func parseIndex(_ data: Data, path: String) throws -> PublicIndex {
        let json: JSONValue
        do { json = try JSONValue.parse(data) } catch { throw StoreError(json: error, path: path) }
        let format = json["format"]?.stringValue
        guard format == PublicIndex.currentFormat else {
            if format == PackageIndex.legacyFormat {
                throw StoreError(path: path, "is a pulse-package/1 index (published by an older pulse-pack, with the manifests "
                    + "beside it): rebuild the package and push its public part")
            }
            throw StoreError(path: path, format.map { "index format \"\($0)\" is not \(PublicIndex.currentFormat)" }
                ?? "not a pulse public index")
        }
        guard let index = try? json.decode(PublicIndex.self) else {
            throw StoreError(path: path, "not a readable \(PublicIndex.currentFormat) index")
        }
        return index
    }

    /// Replaces index.json atomically.
    public func writeIndex(_ index: PublicIndex) throws {
        try AtomicFile.makeFolder(root)
        try AtomicFile.write(index.fileBytes, to: indexURL, mode: 0o644)
    }

    /// Reads `refs/<name>.json`, checked against its name.
    public func readBlobList(_ name: String) throws -> BlobList {
        let url = refsURL(name)
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw StoreError(path: url.path, "cannot read: \(Errno.describe(error))")
        }
        try Self.check(data, named: name, path: url.path)
        do { return try BlobList(parsing: data, file: url.path) } catch let error as InputError {
            throw StoreError(path: url.path, error.message)
        }
    }

    /// Checks that `data` hashes to `name`.
    public static func check(_ data: Data, named name: String, path: String) throws {
        guard SHA256.hex(data) == name else {
            throw StoreError(path: path, "bytes do not hash to its name (damaged or edited)")
        }
    }
}
