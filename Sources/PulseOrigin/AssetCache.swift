import Foundation
import PulseCrypto
import PulseHTTPServer
import Synchronization

/// Which blobs were verified (per file identity), which are corrupt, and which are kept in memory within
/// a byte budget (least recently used out first). Thread-safe.
///
/// Hashing happens on a few verifier threads, never on the server threads that serve blobs already known
/// (see `Verifier`): a first request for a blob waits for the verdict with its connection suspended; other
/// requests for the same blob join that one verification instead of hashing it again.
final class AssetCache: Sendable {
    /// What a lookup found.
    enum Lookup: Sendable {
        /// A verified blob; `outcome` is `verified` (hashed for this request), `memory` or `disk`.
        case blob(VerifiedBlob, outcome: String)
        case missing
        /// Its bytes do not hash to its name, it is not a regular file, or it is over the size limit.
        case corrupt
        /// It could not be read (permissions, I/O error).
        case unreadable(SystemError)
        /// It is being hashed now; the verdict follows through `Verification.whenDone`.
        case verifying(Verification)
        /// Too many blobs are waiting to be hashed: try again in a moment (503 with Retry-After).
        case busy
    }

    /// A class so the hot path updates it in place (no dictionary write-back); only touched under `state`'s lock.
    private final class Slot {
        enum State { case verified(VerifiedBlob), corrupt(FileStatus) }
        var state: State
        var checkedAt: UInt64
        var lastUsed: UInt64
        init(state: State, checkedAt: UInt64, lastUsed: UInt64) {
            self.state = state
            self.checkedAt = checkedAt
            self.lastUsed = lastUsed
        }
        var status: FileStatus {
            switch state {
            case let .verified(blob): blob.status
            case let .corrupt(status): status
            }
        }
    }

    private struct State {
        var slots: [BlobDigest: Slot] = [:]
        var memoryUsed = 0
        var clock: UInt64 = 0
        /// Verifications queued or running, one per blob.
        var verifying: [BlobDigest: Verification] = [:]
    }

    let folder: String
    let memoryBudget: Int
    let memoryMaxBlob: Int
    /// Blobs larger than this are corrupt without being read.
    let maxBlobBytes: Int
    /// How long a stat of a known blob is trusted before the file is looked at again.
    let recheckNanoseconds: UInt64
    let headers: OriginHeaders
    let alarm: @Sendable (String) -> Void
    let verifier: Verifier
    /// Files hashed so far (each verification reads its file once).
    let hashings = Atomic<Int>(0)
    /// Blob files found corrupt so far (each version of a file once: wrong bytes, too large, not a regular file).
    let corruptFound = Atomic<Int>(0)
    private let state = Mutex(State())

    init(folder: String, memoryBudget: Int, memoryMaxBlob: Int, maxBlobBytes: Int, recheckNanoseconds: UInt64,
         headers: OriginHeaders, verifier: Verifier, alarm: @escaping @Sendable (String) -> Void) {
        self.folder = folder
        self.memoryBudget = memoryBudget
        self.memoryMaxBlob = min(memoryMaxBlob, memoryBudget)
        self.maxBlobBytes = maxBlobBytes
        self.recheckNanoseconds = recheckNanoseconds
        self.headers = headers
        self.verifier = verifier
        self.alarm = alarm
    }

    /// Bytes of blobs held in memory now.
    var memoryUsed: Int { state.withLock { $0.memoryUsed } }

    /// Finds blob `digest`; the first time (or after the file changed) starts its verification.
    func lookup(_ digest: BlobDigest, now: UInt64) -> Lookup {
        let fresh: Lookup? = state.withLock { state in
            guard let slot = state.slots[digest], now &- slot.checkedAt < recheckNanoseconds else { return nil }
            state.clock += 1
            slot.lastUsed = state.clock
            return Self.result(slot)
        }
        if let fresh { return fresh }

        let path = folder + "/" + digest.hex
        let status: FileStatus
        do { status = try FileStatus.ofLink(path: path) } catch {
            if error.code == ENOENT || error.code == ENOTDIR {
                state.withLock { forget(digest, in: &$0) }
                return .missing
            }
            return .unreadable(error)
        }
        let known: Lookup? = state.withLock { state in
            guard let slot = state.slots[digest], slot.status == status else { return nil }
            state.clock += 1
            slot.lastUsed = state.clock
            slot.checkedAt = now
            return Self.result(slot)
        }
        if let known { return known }
        if let refusal = refuse(path, status) { return recordCorrupt(digest, status, now: now, refusal) }
        return startVerification(digest, path: path, now: now)
    }

    /// The file changed under a verified blob (seen when opening it to send): check it again.
    func reverify(_ digest: BlobDigest, now: UInt64) -> Lookup {
        state.withLock { forget(digest, in: &$0) }
        return lookup(digest, now: now)
    }

    /// Why a file is corrupt from its status alone (never read), or nil.
    private func refuse(_ path: String, _ status: FileStatus) -> String? {
        switch status.kind {
        case .regular: break
        case .symbolicLink: return "CORRUPT BLOB \(path): a symbolic link, not a regular file; answering 500 and never following it"
        case let kind: return "CORRUPT BLOB \(path): not a regular file (\(kind)); answering 500 and never reading it"
        }
        guard status.size <= maxBlobBytes else {
            return "CORRUPT BLOB \(path): \(status.size) bytes, over the \(maxBlobBytes)-byte limit (--max-blob-size); "
                + "answering 500 without reading it"
        }
        return nil
    }

    /// Remembers the verdict and says it once per version of the file (two requests may find it at once).
    private func recordCorrupt(_ digest: BlobDigest, _ status: FileStatus, now: UInt64, _ message: String) -> Lookup {
        let isNews = state.withLock { state in
            if let slot = state.slots[digest], case let .corrupt(known) = slot.state, known == status {
                slot.checkedAt = now
                return false
            }
            forget(digest, in: &state)
            state.slots[digest] = Slot(state: .corrupt(status), checkedAt: now, lastUsed: 0)
            return true
        }
        if isNews {
            corruptFound.add(1, ordering: .relaxed)
            alarm(message)
        }
        return .corrupt
    }

    /// Joins the verification of `digest` in progress, or queues a new one.
    private func startVerification(_ digest: BlobDigest, path: String, now: UInt64) -> Lookup {
        let (verification, isNew): (Verification?, Bool) = state.withLock { state in
            if let running = state.verifying[digest] { return (running, false) }
            guard state.verifying.count < verifier.maxQueued else { return (nil, false) }
            let verification = Verification()
            state.verifying[digest] = verification
            return (verification, true)
        }
        guard let verification else { return .busy }
        if isNew {
            verifier.run { [self] in
                let outcome = verify(digest, path: path, now: now)
                state.withLock { _ = $0.verifying.removeValue(forKey: digest) }
                verification.finish(outcome)
            }
        }
        return .verifying(verification)
    }

    private static func result(_ slot: Slot) -> Lookup {
        switch slot.state {
        case let .verified(blob): .blob(blob, outcome: blob.memory == nil ? "disk" : "memory")
        case .corrupt: .corrupt
        }
    }

    private func forget(_ digest: BlobDigest, in state: inout State) {
        if let old = state.slots.removeValue(forKey: digest), case let .verified(blob) = old.state {
            state.memoryUsed -= blob.memoryCost
        }
    }

    /// Hashes the file (reading it through the descriptor whose fstat becomes its identity) and records the
    /// verdict. Runs on a verifier thread.
    private func verify(_ digest: BlobDigest, path: String, now: UInt64) -> Lookup {
        let file: OpenFile
        do { file = try OpenFile(path: path) } catch {
            if error.code == ENOENT { return .missing }
            if error.code == ELOOP || error.code == ENXIO, let current = try? FileStatus.ofLink(path: path),
               let refusal = refuse(path, current) {
                // Replaced by a symbolic link or a socket since the stat.
                return recordCorrupt(digest, current, now: now, refusal)
            }
            return .unreadable(error)
        }
        let status = file.status
        if let refusal = refuse(path, status) { return recordCorrupt(digest, status, now: now, refusal) }
        hashings.add(1, ordering: .relaxed)
        var memory: ByteBuffer?
        let actual: [UInt8]
        do {
            if status.size <= memoryMaxBlob {
                let buffer = try ByteBuffer(readingFrom: file, count: status.size)
                actual = SHA256.hash(buffer)
                memory = buffer
            } else {
                let hasher = SHA256Hasher()
                var offset = 0
                while offset < status.size {
                    let chunk = try file.read(at: offset, count: min(1 << 20, status.size - offset))
                    if chunk.isEmpty { break }
                    hasher.update(chunk)
                    offset += chunk.count
                }
                guard offset == status.size else { throw SystemError(operation: "read (file shrank)", path: path, code: EIO) }
                actual = hasher.finalize()
            }
        } catch let error as SystemError {
            return .unreadable(error)
        } catch {
            return .unreadable(SystemError(operation: "read", path: path, code: EIO))
        }

        guard constantTimeEqual(actual, digest.bytes) else {
            return recordCorrupt(digest, status, now: now,
                "CORRUPT BLOB \(path): its \(status.size) bytes hash to \(Hex.encode(actual)), not to its name; "
                + "answering 500 and never serving it until the file is replaced with the right bytes")
        }
        let blob = VerifiedBlob(digest: digest, path: path, status: status, memory: memory, policy: headers)
        state.withLock { state in
            forget(digest, in: &state)
            state.clock += 1
            state.slots[digest] = Slot(state: .verified(blob), checkedAt: now, lastUsed: state.clock)
            state.memoryUsed += blob.memoryCost
            if state.memoryUsed > memoryBudget { evict(&state, keep: digest) }
        }
        return .blob(blob, outcome: "verified")
    }

    /// Drops memory copies, least recently used first, until the budget holds (the newest blob last).
    private func evict(_ state: inout State, keep: BlobDigest) {
        let candidates = state.slots.compactMap { key, slot -> (BlobDigest, UInt64)? in
            guard case let .verified(blob) = slot.state, blob.memory != nil else { return nil }
            return (key, key == keep ? UInt64.max : slot.lastUsed)
        }.sorted { $0.1 < $1.1 }
        for (key, _) in candidates {
            guard state.memoryUsed > memoryBudget else { break }
            guard let slot = state.slots[key], case let .verified(blob) = slot.state else { continue }
            slot.state = .verified(blob.withoutMemory(policy: headers))
            state.memoryUsed -= blob.memoryCost
        }
    }
}
