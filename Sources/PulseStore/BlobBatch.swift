import Foundation
import PulseCrypto

/// Blobs written by one build, made visible together: each is written to a temp file in the store's
/// folder, which a few flusher threads fsync while the caller goes on with its next blob (fsync waits
/// for the disk; on a disk the flushes of a build then overlap each other and its CPU work). `commit`
/// waits for every fsync, then renames the blobs to their names and fsyncs the folder once. A crash or
/// `kill -9` before the rename leaves only `.tmp-*` files, never a blob whose bytes do not match its name.
public final class BlobBatch: @unchecked Sendable {
    public let store: BlobStore
    private let lock = NSLock()
    private var staged: [String: String] = [:]
    private let flusher = Flusher(threads: 4)

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
            let file = try AtomicFile.writeUnsynced(bytes, to: temp, mode: 0o444)
            flusher.submit { try AtomicFile.sync(file, temp: temp) }
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
        try flusher.finish()
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
        _ = try? flusher.finish()
        lock.withLock {
            for temp in staged.values { unlink(temp) }
            staged = [:]
        }
        for hash in committed { unlink(store.path(for: hash)) }
    }
}

/// Runs submitted flushes on up to `maximumThreads` threads of its own, started when there is work and
/// ended when there is none; `finish` waits for all flushes and throws the first error.
private final class Flusher: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [() throws -> Void] = []
    private var threads = 0
    private let maximumThreads: Int
    private var error: (any Error)?

    init(threads: Int) { maximumThreads = threads }

    func submit(_ job: @escaping () throws -> Void) {
        condition.withLock {
            jobs.append(job)
            if threads < maximumThreads {
                threads += 1
                Thread { self.work() }.start()
            }
        }
    }

    func finish() throws {
        try condition.withLock {
            while threads > 0 { condition.wait() }
            defer { error = nil }
            if let error { throw error }
        }
    }

    private func work() {
        condition.lock()
        while !jobs.isEmpty {
            let job = jobs.removeFirst()
            condition.unlock()
            var failure: (any Error)?
            do { try job() } catch { failure = error }
            condition.lock()
            if let failure, error == nil { error = failure }
        }
        threads -= 1
        condition.broadcast()
        condition.unlock()
    }
}
