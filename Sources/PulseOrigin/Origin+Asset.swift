import Foundation
import PulseHTTPServer
import PulseSystem

extension Origin {
    /// GET/HEAD of one blob: verified before it is first served (on a verifier thread, the request waiting
    /// suspended), then from memory or disk.
    func asset(_ digest: BlobDigest, _ request: HTTPRequest) -> HTTPResponse {
        answer(digest, request, assets.lookup(digest, now: SystemClock.monotonicNanoseconds()), mayWait: true)
    }

    /// The answer once `found` is known. `mayWait` is false when answering after a verdict (the answer then
    /// cannot be deferred again).
    private func answer(_ digest: BlobDigest, _ request: HTTPRequest, _ lookup: AssetCache.Lookup, mayWait: Bool) -> HTTPResponse {
        var found = lookup
        for _ in 0..<2 {
            switch found {
            case let .verifying(verification):
                guard mayWait else { return HTTPResponse(retryLater, note: "changing") }
                let later = HTTPDeferredResponse()
                verification.whenDone { [self] verdict in later.complete(answer(digest, request, verdict, mayWait: false)) }
                return HTTPResponse(later)
            case .busy:
                return HTTPResponse(retryLater, note: "busy")
            case let .blob(blob, outcome):
                guard let response = send(blob, request, outcome) else {
                    // The file on disk is no longer the one verified: check it again.
                    found = assets.reverify(digest, now: SystemClock.monotonicNanoseconds())
                    continue
                }
                return response
            default:
                break
            }
            break
        }
        switch found {
        case .missing: return HTTPResponse(notFound, note: "miss")
        case .corrupt: return HTTPResponse(broken, note: "corrupt")
        case let .unreadable(error):
            alarm("cannot read blob: \(error)")
            return HTTPResponse(broken, note: "unreadable")
        case .busy, .verifying: return HTTPResponse(retryLater, note: "busy")
        case .blob: return HTTPResponse(broken, note: "changing")  // the file kept changing under us
        }
    }

    /// The 416's body, as docs/openapi.yaml gives it (text/plain, like every error answer).
    static let rangeNotSatisfiable = Array("range not satisfiable\n".utf8)

    /// The 200, 206, 304 or 416 for a verified blob; nil when its file changed since it was verified.
    private func send(_ blob: VerifiedBlob, _ request: HTTPRequest, _ outcome: String) -> HTTPResponse? {
        if let condition = request.headers["if-none-match"], IfNoneMatch.matches(condition, tag: blob.tag) {
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
            // An error about this request, not the blob: no cache may keep it (and it has no ETag to keep it by).
            return HTTPResponse(
                status: 416,
                headers: [
                    HTTPHeader("Content-Range", "bytes */\(blob.status.size)"),
                    HTTPHeader("Accept-Ranges", "bytes"),
                    HTTPHeader("Cache-Control", "no-store"),
                    HTTPHeader("Content-Type", "text/plain; charset=utf-8"),
                    HTTPHeader("X-Content-Type-Options", "nosniff"),
                ] + headers.cors,
                body: .bytes(Self.rangeNotSatisfiable), note: outcome)
        }
        if let memory = blob.memory {
            guard case let .part(first, last) = range else { return HTTPResponse(blob.whole!, note: outcome) }
            return partial(blob, first, last, body: .buffer(memory, offset: first, count: last - first + 1), outcome)
        }
        // From disk: the descriptor sent must be the very file that was verified (same device, inode, size,
        // modification and change time).
        guard let file = try? OpenFile(path: blob.path), file.status == blob.status else { return nil }
        guard case let .part(first, last) = range else {
            return HTTPResponse(status: 200, headers: blob.headers, body: .file(file, offset: 0, count: blob.status.size), note: outcome)
        }
        return partial(blob, first, last, body: .file(file, offset: first, count: last - first + 1), outcome)
    }

    private func partial(_ blob: VerifiedBlob, _ first: Int, _ last: Int, body: HTTPBody, _ outcome: String) -> HTTPResponse {
        HTTPResponse(
            status: 206,
            headers: blob.headers + [HTTPHeader("Content-Range", "bytes \(first)-\(last)/\(blob.status.size)")],
            body: body, note: outcome)
    }
}
