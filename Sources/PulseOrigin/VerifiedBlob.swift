import Foundation
import PulseHTTPServer

/// A blob whose bytes were hashed and found to match its name, as it was on disk at that moment
/// (`status`: device, inode, size, modification and change time). Holds the prepared responses that never change for it.
final class VerifiedBlob: Sendable {
    let digest: BlobDigest
    let path: String
    let status: FileStatus
    /// The 64 hex digits as bytes: the opaque part of the ETag, compared against If-None-Match.
    let tag: [UInt8]
    /// Headers of a 200/206 (Content-Range is added for a 206).
    let headers: [HTTPHeader]
    /// The 304 answer, prepared once.
    let notModified: SharedResponse
    /// The bytes, when the blob is kept in memory.
    let memory: ByteBuffer?
    /// The full 200 answer from memory, prepared once.
    let whole: SharedResponse?

    init(digest: BlobDigest, path: String, status: FileStatus, memory: ByteBuffer?, policy: OriginHeaders) {
        self.digest = digest
        self.path = path
        self.status = status
        let hex = digest.hex
        tag = Array(hex.utf8)
        headers = policy.blobHeaders(hex: hex, digest: digest.bytes)
        notModified = SharedResponse(HTTPResponse(status: 304, headers: policy.notModifiedHeaders(etag: "\"\(hex)\"")))
        self.memory = memory
        let headers = self.headers
        whole = memory.map { SharedResponse(HTTPResponse(status: 200, headers: headers, body: .buffer($0, offset: 0, count: $0.count))) }
    }

    /// The same blob without its memory copy (evicted from the memory budget).
    func withoutMemory(policy: OriginHeaders) -> VerifiedBlob {
        VerifiedBlob(digest: digest, path: path, status: status, memory: nil, policy: policy)
    }

    var memoryCost: Int { memory?.count ?? 0 }
}

/// The fixed headers of the origin's answers.
struct OriginHeaders: Sendable {
    /// Access-Control-Allow-Origin value, nil to send no CORS headers.
    let allowOrigin: String?

    static let immutable = "public, max-age=31536000, immutable"

    func blobHeaders(hex: String, digest: [UInt8]) -> [HTTPHeader] {
        var headers = [
            HTTPHeader("Content-Type", "application/octet-stream"),
            HTTPHeader("Cache-Control", Self.immutable),
            HTTPHeader("ETag", "\"\(hex)\""),
            HTTPHeader("Accept-Ranges", "bytes"),
            HTTPHeader("Repr-Digest", "sha-256=:\(Data(digest).base64EncodedString()):"),
            HTTPHeader("X-Content-Type-Options", "nosniff"),
        ]
        headers += cors
        return headers
    }

    func notModifiedHeaders(etag: String, cacheControl: String = Self.immutable) -> [HTTPHeader] {
        [HTTPHeader("ETag", etag), HTTPHeader("Cache-Control", cacheControl)] + cors
    }

    /// The answer to a CORS preflight: GET and HEAD with the request headers the origin reads, remembered by
    /// the browser for a day.
    var preflight: [HTTPHeader] {
        guard let allowOrigin else { return [] }
        return [
            HTTPHeader("Access-Control-Allow-Origin", allowOrigin),
            HTTPHeader("Access-Control-Allow-Methods", "GET, HEAD"),
            HTTPHeader("Access-Control-Allow-Headers", "If-None-Match, Range, If-Range"),
            HTTPHeader("Access-Control-Max-Age", "86400"),
        ]
    }

    var cors: [HTTPHeader] {
        guard let allowOrigin else { return [] }
        return [
            HTTPHeader("Access-Control-Allow-Origin", allowOrigin),
            HTTPHeader("Access-Control-Expose-Headers", "ETag, Content-Length, Content-Range, Accept-Ranges, Repr-Digest"),
        ]
    }

    /// A small text answer that no cache may keep (404, 405, 5xx).
    func uncacheable(_ status: Int, _ text: String, extra: [HTTPHeader] = []) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [
                HTTPHeader("Content-Type", "text/plain; charset=utf-8"),
                HTTPHeader("Cache-Control", "no-store"),
                HTTPHeader("X-Content-Type-Options", "nosniff"),
            ] + extra + cors,
            body: .bytes(Array(text.utf8)))
    }
}
