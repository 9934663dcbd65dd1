import PulseHTTPServer
import PulseServerStorage

extension SyncServer {
    /// `GET /api/sync/keys?session=ID`: `{"deckVersion","released":[{"n","keyB64","nonceB64"}]}`, no-store.
    /// The range comes from `ReleasePolicy.releasedSlides` and nothing else: the session's state and live
    /// frontier, its venue rule against the request's address, allowDownload. The deck is the session's
    /// current one; a new deckVersion releases its slides up to the frontier, nothing beyond.
    func keys(_ request: HTTPRequest, device: SyncCache.Device, query: ArraySlice<UInt8>, now: Int64) throws -> HTTPResponse {
        guard let id = Self.sessionParameter(query), let session = try entitledSession(device, id) else {
            return HTTPResponse(answers.notFound, "no:session")
        }
        let client = ClientAddress.resolve(
            peer: request.client, forwardedFor: request.headers.values("x-forwarded-for"), trusted: configuration.trustedProxies)
        let released = ReleasePolicy.releasedSlides(
            state: session.state, frontier: session.maxShown, slideCount: session.slideCount,
            venue: session.venueCheck(client: client), allowDownload: session.allowDownload)
        guard let table = try cache.keys(session: session.id, deckVersion: session.deckVersion) else {
            throw ServerError(.storage, "session \(session.id) has no key table for its deckVersion \(session.deckVersion)")
        }
        return HTTPResponse(table.response(releasing: released), note: "keys:\(released.count)")
    }

    /// `GET /api/sync/manifest?session=ID`: the session manifest as the device sees it now (released gated
    /// resources substituted), `ETag: "<packageVersion>"`, `If-None-Match` → 304, `private, no-cache`.
    func manifest(_ request: HTTPRequest, device: SyncCache.Device, query: ArraySlice<UInt8>, now: Int64) throws -> HTTPResponse {
        guard let id = Self.sessionParameter(query), let session = try entitledSession(device, id),
              let rendered = try cache.manifest(session, now: now)
        else { return HTTPResponse(answers.notFound, "no:session") }
        return conditional(request, rendered, note: "manifest")
    }

    /// `GET /api/sync/series/{id}/manifest`: for a device enrolled for that series only.
    func seriesManifest(_ request: HTTPRequest, device: SyncCache.Device, series id: String, now: Int64) throws -> HTTPResponse {
        guard Identifier.isValid(id), device.record.scope == .series(id), let series = try cache.series(id) else {
            return HTTPResponse(answers.notFound, "no:series")
        }
        return conditional(request, try cache.seriesManifest(series, now: now), note: "series-manifest")
    }

    /// 200 with the manifest, or 304 when `If-None-Match` names its packageVersion.
    private func conditional(_ request: HTTPRequest, _ rendered: ManifestView.Rendered, note: String) -> HTTPResponse {
        let etag = "\"" + rendered.packageVersion + "\""
        let headers = [HTTPHeader("ETag", etag), HTTPHeader("Cache-Control", "private, no-cache")]
        if let condition = request.headers["if-none-match"], IfNoneMatch.matches(condition, tag: Array(rendered.packageVersion.utf8)) {
            return HTTPResponse(status: 304, headers: headers, note: note + ":304")
        }
        return HTTPResponse(status: 200, headers: [Self.jsonType] + headers, body: .bytes(rendered.body), note: note)
    }

    static let jsonType = HTTPHeader("Content-Type", "application/json")
    static let noStore = HTTPHeader("Cache-Control", "no-store")
}

/// `If-None-Match` against one entity-tag, on bytes (RFC 9110 §13.1.2): a list of tags, weak comparison
/// (`W/"x"` matches `"x"`), or `*`.
enum IfNoneMatch {
    static func matches(_ header: [UInt8], tag: [UInt8]) -> Bool {
        var index = 0
        let end = header.count
        while index < end {
            let byte = header[index]
            if byte == 0x20 || byte == 0x09 || byte == 0x2c { index += 1; continue }
            if byte == 0x2a { return true }
            if byte == UInt8(ascii: "W"), index + 1 < end, header[index + 1] == UInt8(ascii: "/") { index += 2 }
            guard index < end, header[index] == 0x22 else { return false }
            let open = index + 1
            var close = open
            while close < end, header[close] != 0x22 { close += 1 }
            guard close < end else { return false }
            if header[open..<close].elementsEqual(tag) { return true }
            index = close + 1
        }
        return false
    }
}
