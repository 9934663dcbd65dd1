import Foundation
import PulseCore
import PulseCrypto
import PulseSystem
import Synchronization

/// Blobs written by one build, made visible together: each is written to a temp file in the store's
/// folder, which a few flusher threads fsync while the caller goes on with its next blob (fsync waits
/// for the disk; on a disk the flushes of a build then overlap each other and its CPU work). `commit`
/// waits for every fsync, then renames the blobs to their names and fsyncs the folder once. A crash or
/// `kill -9` before the rename leaves only `.tmp-*` files, never a blob whose bytes do not match its name.
public final class BlobBatch: Sendable {
    private struct State {
        /// The blobs staged (or being staged) as `.tmp-<hash>`.
        var staged: Set<Digest> = []
        /// The store's folder, opened at the first `put` (it may not exist before): blobs are checked,
        /// created and renamed relative to it, without a walk of its path for each.
        var folder: Folder?
    }

    public let store: BlobStore
    private let state = Mutex(State())
    private let flusher = Flusher(threads: 4)

    public init(store: BlobStore) {
        self.store = store
    }

    /// Stages `bytes` (whose SHA-256 is `hash`). Thread-safe.
    /// - Returns: true if the blob is new, false if it is already stored (same size) or staged.
    public func put(_ bytes: some ContiguousBytes & Collection, hash: Digest) throws -> Bool {
        let folder = try openFolder()
        if folder.sizeOfRegularFile(hash.hex) == bytes.count { return false }
        let claimed = state.withLock { $0.staged.insert(hash).inserted }
        guard claimed else { return false }
        do throws(PathError) {
            let temp = try TempFile.create(".tmp-" + hash.hex, in: folder, with: bytes, mode: 0o444)
            flusher.submit { try StoreError.wrapping { () throws(PathError) in try temp.finish() } }
        } catch {
            _ = state.withLock { $0.staged.remove(hash) }
            throw StoreError(error)
        }
        return true
    }

    /// The blobs staged so far.
    public var hashes: [Digest] { state.withLock { Array($0.staged) } }

    /// Renames every staged blob into place and fsyncs the folder once.
    public func commit() throws {
        try flusher.finish()
        let moves = state.withLock { $0.staged.sorted() }
        if !moves.isEmpty {
            let folder = try openFolder()
            try StoreError.wrapping { () throws(PathError) in
                for hash in moves { try folder.rename(".tmp-" + hash.hex, to: hash.hex) }
            }
        }
        try AtomicFile.syncFolder(store.folder)
        state.withLock { $0.staged = [] }
    }

    private func openFolder() throws -> Folder {
        try state.withLock { state in
            if let folder = state.folder { return folder }
            let opened = try StoreError.wrapping { () throws(PathError) in try Folder.open(store.folderPath) }
            state.folder = opened
            return opened
        }
    }

    /// Removes staged temp files (after a failure) and, with `committed`, blobs a failed build created.
    public func discard(committed: [Digest] = []) {
        _ = try? flusher.finish()
        state.withLock { state in
            for hash in state.staged { try? FileSystem.remove(store.folderPath + "/.tmp-" + hash.hex) }
            state.staged = []
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
final class Flusher: Sendable {
    typealias Job = () throws -> Void

    private struct State {
        var jobs: [Job] = []
        var threads = 0
        /// Threads waiting for a job.
        var idle = 0
        /// Set by `finish`: idle threads end instead of waiting.
        var finishing = false
        var error: (any Error)?
        /// Threads started so far (for tests).
        var threadsStarted = 0
    }

    private let state = Condition(State())
    private let maximumThreads: Int
    private let linger: TimeInterval
    /// Flushes queued before a thread is started or woken.
    private let batch: Int

    /// Threads started so far (for tests).
    var threadsStarted: Int { state.withLock { $0.threadsStarted } }

    init(threads: Int, batch: Int = 16, linger: TimeInterval = 1) {
        maximumThreads = threads
        self.batch = batch
        self.linger = linger
    }

    func submit(_ job: @escaping Job) {
        let wake = state.withLock { state -> Bool in
            state.jobs.append(job)
            guard state.jobs.count >= batch else { return false }
            if state.idle > 0 { return true }
            if state.threads < maximumThreads { startThread(&state) }
            return false
        }
        if wake { state.wake(.one) }
    }

    func finish() throws {
        state.withLock(waking: .all) { state in
            state.finishing = true
            // Flushes fewer than a batch wait for no thread: start threads for them (on a disk each fsync
            // waits for it, so they run side by side) and run them here as well.
            let missing = min(maximumThreads - state.threads, state.jobs.count - state.idle)
            for _ in 0..<max(missing, 0) { startThread(&state) }
        }
        while let job = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) { run(job) }
        let error = state.wait(until: { $0.threads == 0 }) { state -> (any Error)? in
            state.finishing = false
            defer { state.error = nil }
            return state.error
        }
        if let error { throw error }
    }

    /// With the state locked.
    private func startThread(_ state: inout State) {
        state.threads += 1
        state.threadsStarted += 1
        Thread { self.work() }.start()
    }

    private func work() {
        while let job = nextJob() { run(job) }
        state.withLock(waking: .all) { $0.threads -= 1 }
    }

    /// The next job, waiting up to `linger` for one while idle; nil when there is none (finishing, or the
    /// wait ran out: the thread ends).
    private func nextJob() -> Job? {
        enum Next { case run(Job), wait, end }
        let next = state.withLock { state -> Next in
            if !state.jobs.isEmpty { return .run(state.jobs.removeFirst()) }
            if state.finishing { return .end }
            state.idle += 1
            return .wait
        }
        switch next {
        case let .run(job): return job
        case .end: return nil
        case .wait:
            return state.wait(until: { !$0.jobs.isEmpty || $0.finishing }, timeout: linger) { state -> Job? in
                state.idle -= 1
                return state.jobs.isEmpty ? nil : state.jobs.removeFirst()
            }
        }
    }

    /// Runs `job` outside the lock and keeps its error if it is the first.
    private func run(_ job: () throws -> Void) {
        var failure: (any Error)?
        do { try job() } catch { failure = error }
        if let failure { state.withLock { if $0.error == nil { $0.error = failure } } }
    }
}
