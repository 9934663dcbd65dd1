import Foundation
import PulseCrypto
import PulseSystem

/// Blobs written by one build, made visible together: each is written to a temp file in the store's
/// folder, which a few flusher threads fsync while the caller goes on with its next blob (fsync waits
/// for the disk; on a disk the flushes of a build then overlap each other and its CPU work). `commit`
/// waits for every fsync, then renames the blobs to their names and fsyncs the folder once. A crash or
/// `kill -9` before the rename leaves only `.tmp-*` files, never a blob whose bytes do not match its name.
public final class BlobBatch: @unchecked Sendable {
    public let store: BlobStore
    private let lock = NSLock()
    /// The blobs staged (or being staged) as `.tmp-<hash>`.
    private var staged: Set<String> = []
    private let flusher = Flusher(threads: 4)
    /// The store's folder, opened at the first `put` (it may not exist before): blobs are checked,
    /// created and renamed relative to it, without a walk of its path for each.
    private var folder: Folder?

    public init(store: BlobStore) {
        self.store = store
    }

    /// Stages `bytes` (whose SHA-256 is `hash`). Thread-safe.
    /// - Returns: true if the blob is new, false if it is already stored (same size) or staged.
    public func put(_ bytes: [UInt8], hash: String) throws -> Bool {
        precondition(Hex.isDigestName(hash), "blob name must be a SHA-256 hex digest")
        let folder = try openFolder()
        if folder.sizeOfRegularFile(hash) == bytes.count { return false }
        let claimed = lock.withLock { () -> Bool in
            staged.insert(hash).inserted
        }
        guard claimed else { return false }
        do throws(PathError) {
            let temp = try TempFile.create(".tmp-" + hash, in: folder, with: bytes, mode: 0o444)
            flusher.submit { try StoreError.wrapping { () throws(PathError) in try temp.finish() } }
        } catch {
            lock.withLock { _ = staged.remove(hash) }
            throw StoreError(error)
        }
        return true
    }

    /// The blobs staged so far.
    public var hashes: [String] { lock.withLock { Array(staged) } }

    /// Renames every staged blob into place and fsyncs the folder once.
    public func commit() throws {
        try flusher.finish()
        let moves = lock.withLock { staged.sorted() }
        if !moves.isEmpty {
            let folder = try openFolder()
            try StoreError.wrapping { () throws(PathError) in
                for hash in moves { try folder.rename(".tmp-" + hash, to: hash) }
            }
        }
        try AtomicFile.syncFolder(store.folder)
        lock.withLock { staged = [] }
    }

    private func openFolder() throws -> Folder {
        try lock.withLock {
            if let folder { return folder }
            let opened = try StoreError.wrapping { () throws(PathError) in try Folder.open(store.folderPath) }
            folder = opened
            return opened
        }
    }

    /// Removes staged temp files (after a failure) and, with `committed`, blobs a failed build created.
    public func discard(committed: [String] = []) {
        _ = try? flusher.finish()
        lock.withLock {
            for hash in staged { try? FileSystem.remove(store.path(for: ".tmp-" + hash)) }
            staged = []
        }
        for hash in committed { try? FileSystem.remove(store.path(for: hash)) }
    }
}

/// Runs submitted flushes on up to `maximumThreads` threads of its own. A thread is woken, or started
/// if none is idle, once `batch` flushes are waiting, and one with nothing to do waits up to `linger`
/// for more before it ends. On tmpfs (or any folder whose fsync returns at once) each flush is done
/// before the next blob is written: a thread started per blob (clone, stack, exit: 268 of them for a
/// 300-slide deck) or woken per blob cost more than the flushes. On a disk, flushes wait for it, a
/// queue builds up and the threads keep running side by side as before. `finish` runs what is left
/// (with the threads), waits for every flush, ends the threads and throws the first error.
final class Flusher: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [() throws -> Void] = []
    private var threads = 0
    /// Threads waiting for a job.
    private var idle = 0
    /// Set by `finish`: idle threads end instead of waiting.
    private var finishing = false
    private let maximumThreads: Int
    private let linger: TimeInterval
    private var error: (any Error)?
    /// Threads started so far (for tests).
    private(set) var threadsStarted = 0

    /// Flushes queued before a thread is started or woken.
    private let batch: Int

    init(threads: Int, batch: Int = 16, linger: TimeInterval = 1) {
        maximumThreads = threads
        self.batch = batch
        self.linger = linger
    }

    func submit(_ job: @escaping () throws -> Void) {
        condition.withLock {
            jobs.append(job)
            guard jobs.count >= batch else { return }
            if idle > 0 {
                condition.signal()
            } else if threads < maximumThreads {
                startThread()
            }
        }
    }

    func finish() throws {
        condition.lock()
        finishing = true
        // Flushes fewer than a batch wait for no thread: start threads for them (on a disk each fsync
        // waits for it, so they run side by side) and run them here as well.
        let missing = min(maximumThreads - threads, jobs.count - idle)
        for _ in 0..<max(missing, 0) { startThread() }
        condition.broadcast()
        while !jobs.isEmpty {
            let job = jobs.removeFirst()
            condition.unlock()
            run(job)
            condition.lock()
        }
        while threads > 0 { condition.wait() }
        finishing = false
        defer {
            error = nil
            condition.unlock()
        }
        if let error { throw error }
    }

    /// With the lock held.
    private func startThread() {
        threads += 1
        threadsStarted += 1
        Thread { self.work() }.start()
    }

    private func work() {
        condition.lock()
        while true {
            if jobs.isEmpty {
                guard !finishing else { break }
                idle += 1
                let deadline = Date(timeIntervalSinceNow: linger)
                while jobs.isEmpty && !finishing && condition.wait(until: deadline) {}
                idle -= 1
                if jobs.isEmpty { break }
            }
            let job = jobs.removeFirst()
            condition.unlock()
            run(job)
            condition.lock()
        }
        threads -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Runs `job` outside the lock and keeps its error if it is the first.
    private func run(_ job: () throws -> Void) {
        var failure: (any Error)?
        do { try job() } catch { failure = error }
        if let failure { condition.withLock { if error == nil { error = failure } } }
    }
}
