import Foundation
import PulseCore
import PulseCrypto
import PulseSystem

/// A folder of write-once, content-addressed blobs: each file is named by the lowercase hex SHA-256 of
/// its bytes, written atomically and left read-only (0444). A blob is never changed in place.
public struct BlobStore: Sendable {
    public let folder: URL
    /// `folder.path`, kept as a string: URL manipulation is costly on the per-blob path.
    let folderPath: String

    public init(folder: URL) {
        self.folder = folder
        folderPath = folder.path
    }

    public func url(for hash: Digest) -> URL { folder.appendingPathComponent(hash.hex) }

    /// The file path of a blob.
    public func path(for hash: Digest) -> String { folderPath + "/" + hash.hex }

    /// The size of the stored blob, or nil if there is none.
    public func size(of hash: Digest) -> Int? { FileInfo.sizeOfRegularFile(path(for: hash)) }

    /// Stores `bytes` under `hash` (which the caller computed as their SHA-256).
    /// - Returns: true if the blob was new, false if an intact copy (same size) was already there.
    @discardableResult
    public func put(_ bytes: [UInt8], hash: Digest) throws -> Bool {
        if size(of: hash) == bytes.count { return false }
        try AtomicFile.write(bytes, to: url(for: hash), mode: 0o444)
        return true
    }

    /// Reads a blob and checks it against its name (size first, then digest).
    /// - Throws: `StoreError` if it is missing, unreadable, the wrong size or does not hash to its name.
    public func read(_ reference: (assetHash: Digest, bytes: Int)) throws -> Data {
        let path = url(for: reference.assetHash).path
        guard let actual = size(of: reference.assetHash) else { throw StoreError(path: path, "missing blob") }
        guard actual == reference.bytes else {
            throw StoreError(path: path, "blob is \(actual) bytes, the manifest says \(reference.bytes)")
        }
        let data: Data
        do { data = try Data(contentsOf: url(for: reference.assetHash)) } catch {
            throw StoreError(path: path, "cannot read: \(Errno.describe(error))")
        }
        guard Digest(of: data) == reference.assetHash else {
            throw StoreError(path: path, "blob bytes do not hash to its name (damaged)")
        }
        return data
    }

    /// Every blob name in the folder (temp files and stray names excluded).
    public func list() throws -> [Digest] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else {
            throw StoreError(path: folder.path, "cannot list blobs")
        }
        return names.compactMap { Digest(hex: $0) }.sorted()
    }
}
