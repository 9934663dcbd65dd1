import Foundation
import PulseCrypto

/// Blobs written by one build, made visible together: each is written to a temp file in the store's
/// folder and fsynced by the thread that made it (so disk flushes overlap other threads' work); `commit`
/// then renames them all to their names and fsyncs the folder once. A crash or `kill -9` before the
/// rename leaves only `.tmp-*` files, never a blob whose bytes do not match its name.
public final class BlobBatch: @unchecked Sendable {
    public let store: BlobStore
    private let lock = NSLock()
    private var staged: [String: String] = [:]

    public init(store: BlobStore) {
        self.store = store
    }

    /// Stages `bytes` (whose SHA-256 is `hash`). Thread-safe.
    /// - Returns: true if the blob is new, false if it is already stored (same size) or staged.
    public func put(_ bytes: [UInt8], hash: String) throws -> Bool {
        precondition(Hex.isDigestName(hash), "blob name must be a SHA-256 hex digest")
        if store.size(of: hash) == bytes.count { return false }
        let temp = store.folderPath + "/.tmp-" + hash
        let claimed = lock.withLock { () -> Bool in
            guard staged[hash] == nil else { return false }
            staged[hash] = temp
            return true
        }
        guard claimed else { return false }
        do {
            try AtomicFile.writeTemp(bytes, to: temp, mode: 0o444)
        } catch {
            lock.withLock { staged[hash] = nil }
            throw error
        }
        return true
    }

    /// The blobs staged so far.
    public var hashes: [String] { lock.withLock { Array(staged.keys) } }

    /// Renames every staged blob into place and fsyncs the folder once.
    public func commit() throws {
        let moves = lock.withLock { staged.sorted { $0.key < $1.key } }
        for (hash, temp) in moves {
            guard rename(temp, store.path(for: hash)) == 0 else {
                throw StoreError.system(store.path(for: hash), "rename", errno: errno)
            }
        }
        try AtomicFile.syncFolder(store.folder)
        lock.withLock { staged = [:] }
    }

    /// Removes staged temp files (after a failure) and, with `committed`, blobs a failed build created.
    public func discard(committed: [String] = []) {
        lock.withLock {
            for temp in staged.values { unlink(temp) }
            staged = [:]
        }
        for hash in committed { unlink(store.path(for: hash)) }
    }
}
