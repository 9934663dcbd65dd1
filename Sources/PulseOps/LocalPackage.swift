import Foundation
import PulseCore
import PulseCrypto
import PulseStore

/// The published part of a local package, read and checked before anything is sent:
/// every manifest file, the blobs they name, and index.json. Keys and the secret are never looked at.
struct LocalPackage {
    struct Manifest {
        /// `sessions/<id>/<packageVersion>.json`
        var path: String
        var data: Data
        var assets: [AssetReference]
    }

    let package: PulsePackage
    let indexData: Data
    let index: PackageIndex
    var manifests: [Manifest] = []
    /// Every blob some manifest names, once, sorted by hash.
    var assets: [AssetReference] = []
    /// The `contentType` manifests give a blob (public images), by hash.
    var contentTypes: [String: String] = [:]

    /// Reads and checks the package: bad input (exit 65) if index.json, a manifest or a blob is
    /// missing or does not match its name or size.
    init(_ package: PulsePackage) throws {
        self.package = package
        let root = package.root.path
        guard package.exists else { throw OpsError(.badInput, root, "not a pulse package (no index.json)") }
        do {
            index = try package.readIndex()
            indexData = try Data(contentsOf: package.indexURL)
        } catch let error as StoreError {
            throw OpsError(.badInput, error.path, error.message)
        }
        var seen: [String: AssetReference] = [:]
        for file in package.manifestFiles() {
            let (manifest, json) = try Self.readManifest(file)
            for reference in manifest.assets {
                if let other = seen[reference.assetHash], other.bytes != reference.bytes {
                    throw OpsError(.badInput, "\(root)/\(manifest.path)",
                                   "names blob \(reference.assetHash) with \(reference.bytes) bytes, another manifest says \(other.bytes)")
                }
                seen[reference.assetHash] = reference
            }
            manifests.append(manifest)
            Self.collectContentTypes(json, into: &contentTypes)
        }
        let present = Set(manifests.map(\.path))
        for file in package.currentManifests(index) where !present.contains(file.path) {
            throw OpsError(.badInput, file.url.path, "missing: index.json names it as current")
        }
        assets = seen.values.sorted { $0.assetHash < $1.assetHash }
        let store = package.assets
        for reference in assets where store.size(of: reference.assetHash) != reference.bytes {
            let path = store.url(for: reference.assetHash).path
            let size = store.size(of: reference.assetHash)
            throw OpsError(.badInput, path, size == nil
                ? "missing blob (a manifest names it)"
                : "blob is \(size!) bytes, the manifest says \(reference.bytes) (damaged)")
        }
    }

    /// Reads one manifest file and checks it against its name; returns it and its parsed JSON.
    static func readManifest(_ file: PulsePackage.ManifestFile) throws -> (Manifest, JSONValue) {
        let url = file.url
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw OpsError(.badInput, url.path, "cannot read manifest")
        }
        let json: JSONValue
        do { json = try JSONValue.parse(data) } catch {
            throw OpsError(.badInput, url.path, "\(error)")
        }
        let version = file.packageVersion
        guard json[PackageVersion.field]?.stringValue == version, PackageVersion.of(json) == version else {
            throw OpsError(.badInput, url.path, "manifest does not match its packageVersion (damaged or edited)")
        }
        let assets = json.assetReferences
        for reference in assets where !Hex.isDigestName(reference.assetHash) || reference.bytes < 0 {
            throw OpsError(.badInput, url.path, "names an invalid blob \"\(reference.assetHash)\"")
        }
        return (Manifest(path: file.path, data: data, assets: assets), json)
    }

    static func collectContentTypes(_ json: JSONValue, into types: inout [String: String]) {
        switch json {
        case let .object(fields):
            if let hash = fields["assetHash"]?.stringValue, let type = fields["contentType"]?.stringValue, isMediaType(type) {
                types[hash] = type
            }
            for value in fields.values { collectContentTypes(value, into: &types) }
        case let .array(items):
            for item in items { collectContentTypes(item, into: &types) }
        default:
            break
        }
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
            return try package.assets.read((reference.assetHash, reference.bytes))
        } catch let error as StoreError {
            throw OpsError(.badInput, error.path, error.message + "; not uploaded")
        }
    }
}
