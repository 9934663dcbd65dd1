import Foundation
import PulseCore
import PulseCrypto
import PulseStore
import PulseSystem

/// Fetches one blob into the cache: from `base` (the server or a CDN) at `/api/sync/asset/<hash>`, written
/// to `partial/<hash>` as it arrives, resumed from there with `Range` and `If-Range` (the validator the
/// first answer gave, kept in `partial/<hash>.etag`), checked (size, then SHA-256 against its name) and
/// only then renamed into `blobs/` read-only. Bytes that do not hash to their name are never kept.
struct BlobDownloader: Sendable {
    let cache: DeviceCache
    let client: SyncClient
    let base: URL

    struct Outcome: Sendable {
        /// Body bytes received for this blob.
        var received = 0
        /// Bytes already on disk from an earlier, interrupted download that the server let us keep.
        var resumedFrom = 0
    }

    /// The download's state, touched on the transport's thread during the exchange and read after it.
    private struct Progress {
        let file: File
        var hasher = SHA256Hasher()
        var written = 0
        var received = 0
        var status = 0
        var restarted = false
    }

    func fetch(_ ref: AssetRef, mayRestart: Bool = true) throws -> Outcome {
        let partial = cache.folder.partialURL.appendingPathComponent(ref.hash.hex).path
        let validatorPath = partial + ".etag"
        var existing = Self.size(partial) ?? 0
        if existing > ref.bytes {
            try? FileSystem.remove(partial)
            existing = 0
        }
        let validator = existing > 0 ? (try? String(contentsOfFile: validatorPath, encoding: .utf8)) : nil
        let file: File
        do throws(PathError) { file = try File.open(partial, .readWrite, creatingWith: 0o600) } catch {
            throw DeviceError(.storage, "\(partial): cannot create: \(error.errno)")
        }
        var progress = Progress(file: file)
        if existing > 0 {
            do throws(PathError) {
                while progress.written < existing {
                    let chunk = try file.read(upTo: min(existing - progress.written, 1 << 20), at: progress.written)
                    guard !chunk.isEmpty else { break }
                    progress.hasher.update(chunk)
                    progress.written += chunk.count
                }
            } catch {
                throw DeviceError(.storage, "\(partial): cannot read: \(error.errno)")
            }
            guard progress.written == existing else { throw DeviceError(.storage, "\(partial) shrank while it was read") }
            if existing == ref.bytes {
                // Complete but never installed (the sync stopped right there): no request needed if it checks out.
                if Digest(bytes: progress.hasher.finalize()) == ref.hash {
                    try install(file, partial: partial, validatorPath: validatorPath, hash: ref.hash)
                    return Outcome(received: 0, resumedFrom: existing)
                }
                try? FileSystem.remove(partial)
                try? FileSystem.remove(validatorPath)
                return try fetch(ref, mayRestart: mayRestart)
            }
        }
        let resumeFrom = existing
        var headers: [(name: String, value: String)] = []
        if existing > 0 {
            headers.append(("Range", "bytes=\(existing)-"))
            if let validator, !validator.isEmpty { headers.append(("If-Range", validator)) }
        }
        let url = try client.url("/api/sync/asset/\(ref.hash.hex)", on: base)
        let what = "GET \(url.absoluteString)"
        // A Condition, not a Mutex: the hasher (not Sendable) goes to the transport's thread and comes back.
        let shared = Condition(progress)
        try client.exchange(DeviceRequest(url: url, headers: headers)) { event in
            try shared.withLock { progress in
                switch event {
                case let .head(status, headers):
                    progress.status = status
                    switch status {
                    case 206 where resumeFrom > 0:
                        guard let range = headers["content-range"], Self.rangeStart(range, total: ref.bytes) == resumeFrom else {
                            throw DeviceError(.server, "\(what): 206 with Content-Range \(headers["content-range"] ?? "none"), expected bytes \(resumeFrom)-…/\(ref.bytes)")
                        }
                    case 200:
                        // The whole blob (a first download, or the server did not honour the range): start over.
                        if progress.written > 0 { progress.restarted = true }
                        try progress.file.truncate(to: 0)
                        progress.hasher = SHA256Hasher()
                        progress.written = 0
                        if let etag = headers["etag"] {
                            try AtomicFile.write(Array(etag.utf8), to: URL(fileURLWithPath: validatorPath), mode: 0o600)
                        } else {
                            try? FileSystem.remove(validatorPath)
                        }
                    case 404:
                        throw DeviceError(.server, "\(what): 404, the server or CDN does not hold this blob (was the package pushed?)")
                    default:
                        throw DeviceError(.server, "\(what): answered \(status)")
                    }
                case let .data(bytes):
                    guard progress.written + bytes.count <= ref.bytes else {
                        throw DeviceError(.integrity, "\(what): longer than the \(ref.bytes) bytes the manifest says; not kept")
                    }
                    try progress.file.write(bytes, at: progress.written)
                    progress.hasher.update(bytes)
                    progress.written += bytes.count
                    progress.received += bytes.count
                }
            }
        }
        progress = shared.withLock { $0 }
        var outcome = Outcome(received: progress.received, resumedFrom: progress.restarted ? 0 : existing)
        guard progress.written == ref.bytes else {
            throw DeviceError(.network, "\(what): the answer ended after \(progress.written) of \(ref.bytes) bytes (kept for resuming)")
        }
        guard Digest(bytes: progress.hasher.finalize()) == ref.hash else {
            try? FileSystem.remove(partial)
            try? FileSystem.remove(validatorPath)
            if outcome.resumedFrom > 0 && mayRestart {
                // The kept part and the rest do not fit together: fetch it whole once.
                let again = try fetch(ref, mayRestart: false)
                outcome.received += again.received
                outcome.resumedFrom = 0
                return outcome
            }
            throw DeviceError(.integrity, "\(what): the bytes served do not hash to the blob's name; not kept")
        }
        try install(file, partial: partial, validatorPath: validatorPath, hash: ref.hash)
        return outcome
    }

    /// Read-only, fsynced, renamed into `blobs/` (the folder is fsynced once per sync, before the commit):
    /// the second half of an atomic write, for a file that was written as it arrived.
    private func install(_ file: File, partial: String, validatorPath: String, hash: Digest) throws {
        do throws(PathError) { try TempFile(adopting: file).finish(mode: 0o444) } catch {
            throw DeviceError(.storage, "\(partial): \(error.operation): \(error.errno)")
        }
        do throws(PathError) { try FileSystem.rename(partial, to: cache.blobs.path(for: hash)) } catch {
            throw DeviceError(.storage, "\(partial): cannot move into blobs/: \(error.errno)")
        }
        try? FileSystem.remove(validatorPath)
    }

    static func size(_ path: String) -> Int? { FileInfo.sizeOfRegularFile(path) }

    /// The first byte of `Content-Range: bytes a-b/total` when the total is `total`; nil otherwise.
    static func rangeStart(_ header: String, total: Int) -> Int? {
        guard header.hasPrefix("bytes ") else { return nil }
        let parts = header.dropFirst(6).split(separator: "/")
        guard parts.count == 2, Int(parts[1]) == total else { return nil }
        let span = parts[0].split(separator: "-")
        guard span.count == 2, let start = Int(span[0]), let end = Int(span[1]), end == total - 1, start <= end else { return nil }
        return start
    }
}
