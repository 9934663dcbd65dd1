import Foundation
import PulseCore
import PulseCrypto
import PulseStore
import PulseSystem

/// The cache half of the device folder: manifests exactly as served, blobs exactly as served (ciphertext
/// is never decrypted to disk), the commit point `cache.json`, and garbage collection across every cached
/// manifest. Callers hold the folder's lock while they change it.
public struct DeviceCache: Sendable {
    public let folder: DeviceFolder
    let blobs: BlobStore

    public init(folder: DeviceFolder) {
        self.folder = folder
        blobs = BlobStore(folder: folder.blobsURL)
    }

    public func readIndex() throws -> CacheIndex { try CacheIndex.read(folder.cacheURL) }

    func writeIndex(_ index: CacheIndex) throws { try index.write(folder.cacheURL) }

    /// The cached manifest of `key` (`session/<id>`, `series/<id>`), with its ETag.
    public func manifest(_ key: String, in index: CacheIndex) throws -> (manifest: Manifest, etag: String?)? {
        guard let entry = index.entries[key] else { return nil }
        let url = folder.manifestsURL.appendingPathComponent(entry.file)
        let bytes: [UInt8]
        do { bytes = Array(try Data(contentsOf: url)) } catch {
            throw DeviceError(.storage, "\(url.path): cannot read the cached manifest of \(key): \(Errno.describe(error))")
        }
        guard SHA256.hex(bytes) == entry.file else {
            throw DeviceError(.integrity, "\(url.path): the cached manifest of \(key) does not hash to its name (damaged)")
        }
        return (try Manifest.parse(bytes, isSession: key.hasPrefix("session/"), what: "cached manifest \(key)"), entry.etag)
    }

    /// The cached session manifest of `id`.
    public func sessionManifest(_ id: String) throws -> Manifest? {
        try manifest(CacheIndex.sessionKey(id), in: readIndex())?.manifest
    }

    /// Stores manifest bytes under their SHA-256 (0600, fsynced); returns the file's name.
    func storeManifest(_ bytes: [UInt8]) throws -> String {
        let name = SHA256.hex(bytes)
        let url = folder.manifestsURL.appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: url.path) { return name }
        do { try AtomicFile.write(bytes, to: url, mode: 0o600) } catch { throw DeviceError(.storage, "cannot write \(url.path): \(error)") }
        return name
    }

    /// True when the blob is in the cache with the right size (its digest was checked before it was kept).
    public func hasBlob(_ ref: AssetRef) -> Bool { blobs.size(of: ref.hash) == ref.bytes }

    /// The blob's bytes, checked against its name again (a cache can be damaged after the fact).
    public func blob(_ ref: AssetRef) throws -> [UInt8] {
        do { return Array(try blobs.read((ref.hash, ref.bytes))) } catch {
            throw DeviceError(.integrity, "\(error); run sync again to fetch it")
        }
    }

    /// What a garbage collection removed.
    public struct Garbage: Sendable, Equatable {
        public var blobs = 0
        public var bytes = 0
        public var manifests = 0
        public var partials = 0
    }

    /// Drops every blob that no manifest of `index` names (references counted across all of them), every
    /// manifest file the index does not name, leftovers of interrupted writes, and partial downloads that
    /// are complete already or that no manifest needs and nobody touched for a day.
    func collectGarbage(_ index: CacheIndex, now: Date = Date()) throws -> Garbage {
        var referenced = Set<Digest>()
        for key in index.entries.keys {
            guard let cached = try manifest(key, in: index) else { continue }
            referenced.formUnion(cached.manifest.assets.map(\.hash))
        }
        var garbage = Garbage()
        let files = FileManager.default
        for name in (try? files.contentsOfDirectory(atPath: folder.blobsURL.path)) ?? [] {
            let path = folder.blobsURL.appendingPathComponent(name).path
            if name.hasPrefix(".tmp-") {
                try? FileSystem.remove(path)
            } else if let hash = Digest(hex: name), !referenced.contains(hash) {
                let size = blobs.size(of: hash) ?? 0
                if (try? FileSystem.remove(path)) != nil {
                    garbage.blobs += 1
                    garbage.bytes += size
                }
            }
        }
        let named = Set(index.entries.values.map(\.file))
        for name in (try? files.contentsOfDirectory(atPath: folder.manifestsURL.path)) ?? [] where !named.contains(name) {
            if (try? FileSystem.remove(folder.manifestsURL.appendingPathComponent(name).path)) != nil, !name.hasPrefix(".tmp-") { garbage.manifests += 1 }
        }
        for name in (try? files.contentsOfDirectory(atPath: folder.partialURL.path)) ?? [] {
            let url = folder.partialURL.appendingPathComponent(name)
            let modified = (try? files.attributesOfItem(atPath: url.path)[.modificationDate] as? Date) ?? now
            let hash = Digest(hex: name.prefix(64))
            let stale = now.timeIntervalSince(modified) > 86_400 && !(hash.map(referenced.contains) ?? false)
            if hash.map({ blobs.size(of: $0) != nil }) ?? true || stale {
                if (try? FileSystem.remove(url.path)) != nil, !name.hasSuffix(".etag") { garbage.partials += 1 }
            }
        }
        return garbage
    }

    /// Every problem of the cache: a manifest that cannot be read, a blob a manifest names that is missing,
    /// of the wrong size or does not hash to its name. Empty when the cache is whole.
    public func check() -> [String] {
        let index: CacheIndex
        do { index = try readIndex() } catch { return ["\(error)"] }
        var problems: [String] = []
        var seen = Set<Digest>()
        for key in index.entries.keys.sorted() {
            do {
                guard let cached = try manifest(key, in: index) else { continue }
                for ref in cached.manifest.assets where seen.insert(ref.hash).inserted {
                    do { _ = try blobs.read((ref.hash, ref.bytes)) } catch { problems.append("\(key): \(error)") }
                }
            } catch {
                problems.append("\(error)")
            }
        }
        return problems
    }

    /// The cached manifests' keys, sorted.
    public func cachedKeys() throws -> [String] { try readIndex().entries.keys.sorted() }
}
