import Foundation
import PulseCrypto
import PulseStore

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
    private final class Progress: @unchecked Sendable {
        let handle: FileHandle
        var hasher = SHA256Hasher()
        var written = 0
        var received = 0
        var status = 0
        var restarted = false

        init(handle: FileHandle) { self.handle = handle }
    }

    func fetch(_ ref: AssetRef, mayRestart: Bool = true) throws -> Outcome {
        let partial = cache.folder.partialURL.appendingPathComponent(ref.hash).path
        let validatorPath = partial + ".etag"
        var existing = Self.size(partial) ?? 0
        if existing > ref.bytes {
            unlink(partial)
            existing = 0
        }
        let validator = existing > 0 ? (try? String(contentsOfFile: validatorPath, encoding: .utf8)) : nil
        let fd = open(partial, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DeviceError(.storage, "\(partial): cannot create: \(String(cString: strerror(errno)))") }
        let progress = Progress(handle: FileHandle(fileDescriptor: fd, closeOnDealloc: true))
        if existing > 0 {
            do {
                try progress.handle.seek(toOffset: 0)
                var left = existing
                while left > 0, let chunk = try progress.handle.read(upToCount: min(left, 1 << 20)), !chunk.isEmpty {
                    progress.hasher.update(chunk)
                    left -= chunk.count
                }
                guard left == 0 else { throw DeviceError(.storage, "\(partial) shrank while it was read") }
            } catch let error as DeviceError { throw error } catch {
                throw DeviceError(.storage, "\(partial): cannot read: \(AtomicFile.reason(error))")
            }
            progress.written = existing
            if existing == ref.bytes {
                // Complete but never installed (the sync stopped right there): no request needed if it checks out.
                if Hex.encode(progress.hasher.finalize()) == ref.hash {
                    try install(progress.handle, fd: fd, partial: partial, validatorPath: validatorPath, hash: ref.hash)
                    return Outcome(received: 0, resumedFrom: existing)
                }
                unlink(partial)
                unlink(validatorPath)
                return try fetch(ref, mayRestart: mayRestart)
            }
        }
        let resumeFrom = existing
        var headers: [(name: String, value: String)] = []
        if existing > 0 {
            headers.append(("Range", "bytes=\(existing)-"))
            if let validator, !validator.isEmpty { headers.append(("If-Range", validator)) }
        }
        let url = try client.url("/api/sync/asset/\(ref.hash)", on: base)
        let what = "GET \(url.absoluteString)"
        try client.exchange(DeviceRequest(url: url, headers: headers)) { event in
            switch event {
            case let .head(status, headers):
                progress.status = status
                switch status {
                case 206 where resumeFrom > 0:
                    guard let range = headers["content-range"], Self.rangeStart(range, total: ref.bytes) == resumeFrom else {
                        throw DeviceError(.server, "\(what): 206 with Content-Range \(headers["content-range"] ?? "none"), expected bytes \(resumeFrom)-…/\(ref.bytes)")
                    }
                    try progress.handle.seek(toOffset: UInt64(resumeFrom))
                case 200:
                    // The whole blob (a first download, or the server did not honour the range): start over.
                    if progress.written > 0 { progress.restarted = true }
                    try progress.handle.truncate(atOffset: 0)
                    progress.hasher = SHA256Hasher()
                    progress.written = 0
                    if let etag = headers["etag"] {
                        try AtomicFile.write(Array(etag.utf8), to: URL(fileURLWithPath: validatorPath), mode: 0o600)
                    } else {
                        unlink(validatorPath)
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
                try progress.handle.write(contentsOf: bytes)
                progress.hasher.update(bytes)
                progress.written += bytes.count
                progress.received += bytes.count
            }
        }
        var outcome = Outcome(received: progress.received, resumedFrom: progress.restarted ? 0 : existing)
        guard progress.written == ref.bytes else {
            throw DeviceError(.network, "\(what): the answer ended after \(progress.written) of \(ref.bytes) bytes (kept for resuming)")
        }
        guard Hex.encode(progress.hasher.finalize()) == ref.hash else {
            unlink(partial)
            unlink(validatorPath)
            if outcome.resumedFrom > 0 && mayRestart {
                // The kept part and the rest do not fit together: fetch it whole once.
                let again = try fetch(ref, mayRestart: false)
                outcome.received += again.received
                outcome.resumedFrom = 0
                return outcome
            }
            throw DeviceError(.integrity, "\(what): the bytes served do not hash to the blob's name; not kept")
        }
        try install(progress.handle, fd: fd, partial: partial, validatorPath: validatorPath, hash: ref.hash)
        return outcome
    }

    /// fsync, read-only, renamed into `blobs/` (the folder is fsynced once per sync, before the commit).
    private func install(_ handle: FileHandle, fd: Int32, partial: String, validatorPath: String, hash: String) throws {
        do {
            try handle.synchronize()
            guard fchmod(fd, 0o444) == 0 else { throw DeviceError(.storage, "\(partial): chmod: \(String(cString: strerror(errno)))") }
            guard rename(partial, cache.blobs.path(for: hash)) == 0 else {
                throw DeviceError(.storage, "\(partial): cannot move into blobs/: \(String(cString: strerror(errno)))")
            }
            unlink(validatorPath)
        } catch let error as DeviceError { throw error } catch {
            throw DeviceError(.storage, "\(partial): \(AtomicFile.reason(error))")
        }
    }

    static func size(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(info.st_size)
    }

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
