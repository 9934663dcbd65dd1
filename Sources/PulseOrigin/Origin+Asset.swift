import Foundation
import PulseHTTPServer

extension Origin {
    /// GET/HEAD of one blob: verified before it is first served, then from memory or disk.
    func asset(_ digest: BlobDigest, _ request: HTTPRequest) -> HTTPResponse {
        let now = Clock.now()
        var found = assets.lookup(digest, now: now)
        for _ in 0..<2 {
            guard case let .blob(blob, outcome) = found else { break }
            if let condition = request.headers["if-none-match"], ConditionalHeaders.noneMatch(condition, tag: blob.tag) {
                return HTTPResponse(blob.notModified, note: outcome)
            }
            var range = ConditionalHeaders.RangeResult.whole
            if request.method == .get, let header = request.headers["range"] {
                let ifRange = request.headers["if-range"]
                if ifRange == nil || ConditionalHeaders.strongMatch(ifRange!, tag: blob.tag) {
                    range = ConditionalHeaders.range(header, length: blob.status.size)
                }
            }
            if case .unsatisfiable = range {
                return HTTPResponse(
                    status: 416,
                    headers: [HTTPHeader("Content-Range", "bytes */\(blob.status.size)")]
                        + blob.headers.filter { $0.name != "Content-Type" && $0.name != "Repr-Digest" },
                    note: outcome)
            }
            if let memory = blob.memory {
                guard case let .part(first, last) = range else { return HTTPResponse(blob.whole!, note: outcome) }
                return partial(blob, first, last, body: .buffer(memory, offset: first, count: last - first + 1), outcome)
            }
            // From disk: the descriptor sent must be the very file that was verified.
            let file: OpenFile
            do { file = try OpenFile(path: blob.path) } catch {
                found = assets.reverify(digest, now: now)
                continue
            }
            guard file.status == blob.status else {
                found = assets.reverify(digest, now: now)
                continue
            }
            guard case let .part(first, last) = range else {
                return HTTPResponse(status: 200, headers: blob.headers, body: .file(file, offset: 0, count: blob.status.size), note: outcome)
            }
            return partial(blob, first, last, body: .file(file, offset: first, count: last - first + 1), outcome)
        }
        switch found {
        case .missing: return HTTPResponse(notFound, note: "miss")
        case .corrupt: return HTTPResponse(broken, note: "corrupt")
        case let .unreadable(error):
            Origin.standardError("cannot read blob: \(error)")
            return HTTPResponse(broken, note: "unreadable")
        case .blob: return HTTPResponse(broken, note: "changing")  // the file kept changing under us
        }
    }

    private func partial(_ blob: VerifiedBlob, _ first: Int, _ last: Int, body: HTTPBody, _ outcome: String) -> HTTPResponse {
        HTTPResponse(
            status: 206,
            headers: blob.headers + [HTTPHeader("Content-Range", "bytes \(first)-\(last)/\(blob.status.size)")],
            body: body, note: outcome)
    }
}

/// Monotonic time for the cache.
enum Clock {
    static func now() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
