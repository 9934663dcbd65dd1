import Foundation
import PulseCore
import PulseCrypto
import PulseStore

/// The public part of a local package (`<package>/public/`, or a folder a push wrote), read and checked
/// before anything is sent: index.json, every blob list it names, every public file, every blob.
/// Nothing of `server/` and no secret is ever looked at.
struct LocalPackage {
    /// A file published as is: a blob list or an app config.
    struct File {
        /// `refs/<sha256>.json`, `appconfig/<org>/<packageVersion>.json`
        var path: String
        var data: Data
    }

    let folder: PublicFolder
    let indexData: Data
    let index: PublicIndex
    var files: [File] = []
    /// Every blob a blob list names, once, sorted by hash.
    var assets: [AssetReference] = []
    /// The `contentType` blob lists give a blob (public images), by hash.
    var contentTypes: [Digest: String] = [:]

    /// Reads and checks the public part: bad input (exit 65) if index.json, a blob list, a public file
    /// or a blob is missing or does not match its name or size.
    init(_ url: URL) throws {
        let package = PulsePackage(root: url)
        if (try? package.layout()) == .legacy { throw OpsError(.badInput, url.path, package.legacyMessage) }
        folder = PublicFolder.locate(url)
        guard folder.exists else {
            throw OpsError(.badInput, url.path, "not a pulse package (no public/index.json)")
        }
        do {
            indexData = try Data(contentsOf: folder.indexURL)
            index = try PublicFolder.parseIndex(indexData, path: folder.indexURL.path)
        } catch let error as StoreError {
            throw OpsError(.badInput, error.path, error.message)
        } catch {
            throw OpsError(.badInput, folder.indexURL.path, "cannot read: \(OpsError.reason(error))")
        }
        var seen: [Digest: BlobList.Entry] = [:]
        var listed = Set<String>()
        for version in index.history.keys.sorted().flatMap({ index.history[$0]! }) {
            let path = "refs/\(version.refs).json"
            if listed.insert(path).inserted {
                let data = try read(path)
                do { try PublicFolder.check(data, named: version.refs, path: folder.root.appendingPathComponent(path).path) } catch let error as StoreError {
                    throw OpsError(.badInput, error.path, error.message)
                }
                let list: BlobList
                do { list = try BlobList(parsing: data, file: folder.root.appendingPathComponent(path).path) } catch let error as InputError {
                    throw OpsError.from(error)
                }
                for entry in list.entries {
                    if let other = seen[entry.assetHash], other.bytes != entry.bytes {
                        throw OpsError(.badInput, folder.refsURL(version.refs).path,
                                       "names blob \(entry.assetHash) with \(entry.bytes) bytes, another blob list says \(other.bytes)")
                    }
                    seen[entry.assetHash] = entry
                    if let type = entry.contentType, Self.isMediaType(type) { contentTypes[entry.assetHash] = type }
                }
                files.append(File(path: path, data: data))
            }
            for path in version.files ?? [] where listed.insert(path).inserted {
                guard Self.isPublicFilePath(path) else { throw OpsError(.badInput, folder.indexURL.path, "names a file outside the public part: \(path)") }
                let data = try read(path)
                try Self.checkAppConfig(data, path: folder.root.appendingPathComponent(path))
                files.append(File(path: path, data: data))
            }
        }
        assets = seen.values.map { AssetReference(assetHash: $0.assetHash, bytes: $0.bytes) }.sorted { $0.assetHash < $1.assetHash }
        let store = folder.assets
        for reference in assets where store.size(of: reference.assetHash) != reference.bytes {
            let path = store.url(for: reference.assetHash).path
            let size = store.size(of: reference.assetHash)
            throw OpsError(.badInput, path, size == nil
                ? "missing blob (a blob list names it)"
                : "blob is \(size!) bytes, the blob list says \(reference.bytes) (damaged)")
        }
    }

    /// An app config is named by its packageVersion, which its content must give.
    static func checkAppConfig(_ data: Data, path url: URL) throws {
        let version = url.deletingPathExtension().lastPathComponent
        guard let json = try? JSONValue.parse(data), json[PackageVersion.field]?.stringValue == version, PackageVersion.of(json) == version else {
            throw OpsError(.badInput, url.path, "app config does not match its packageVersion (damaged or edited)")
        }
    }

    private func read(_ path: String) throws -> Data {
        let url = folder.root.appendingPathComponent(path)
        do { return try Data(contentsOf: url) } catch {
            throw OpsError(.badInput, url.path, "missing or unreadable (index.json names it)")
        }
    }

    /// `appconfig/<org>/<name>.json`: plain names only, nothing that climbs out of the folder.
    static func isPublicFilePath(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 3 && parts[0] == "appconfig" && parts.dropFirst().allSatisfy {
            !$0.isEmpty && !$0.hasPrefix(".") && $0.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) }
        } && parts[2].hasSuffix(".json")
    }

    /// `type/subtype` of token characters only: nothing that could break a header line.
    static func isMediaType(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        let token = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$&^_.+-")
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(token.contains) }
    }

    /// A blob's bytes, checked against its SHA-256 name just before it is sent.
    func verifiedBlob(_ reference: AssetReference) throws -> Data {
        do {
            return try folder.assets.read((reference.assetHash, reference.bytes))
        } catch let error as StoreError {
            throw OpsError(.badInput, error.path, error.message + "; not uploaded")
        }
    }
}
