import PulseHTTPServer
import PulseServerStorage

extension SyncAPI {
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
        keyHolders.record(session: session.id, device: device.record.id, deckVersion: session.deckVersion, released: released)
        return try signed(
            HTTPResponse(table.response(releasing: released), note: "keys:\(released.count)"), route: "/api/sync/keys", query: query,
            device: device, seq: Int(session.changeSequence), deckVersion: session.deckVersion, now: now)
    }

    /// `GET /api/sync/manifest?session=ID`: the session manifest as the device sees it now (released gated
    /// resources substituted), `ETag: "<packageVersion>"`, `If-None-Match` → 304, `private, no-cache`.
    func manifest(_ request: HTTPRequest, device: SyncCache.Device, query: ArraySlice<UInt8>, now: Int64) throws -> HTTPResponse {
        guard let id = Self.sessionParameter(query), let session = try entitledSession(device, id),
              let rendered = try cache.manifest(session, now: now)
        else { return HTTPResponse(answers.notFound, "no:session") }
        return try signed(
            conditional(request, rendered, note: "manifest"), route: "/api/sync/manifest", query: query, device: device,
            seq: Int(session.changeSequence), packageVersion: rendered.packageVersion, now: now)
    }

    /// `GET /api/sync/series/{id}/manifest`: for a device enrolled for that series only.
    func seriesManifest(_ request: HTTPRequest, device: SyncCache.Device, series id: String, now: Int64) throws -> HTTPResponse {
        guard Identifier.isValid(id), device.record.scope == .series(id), let series = try cache.series(id) else {
            return HTTPResponse(answers.notFound, "no:series")
        }
        let rendered = try cache.seriesManifest(series, now: now)
        return try signed(
            conditional(request, rendered, note: "series-manifest"), route: "/api/sync/series/\(id)/manifest", query: Self.split(request.target).query,
            device: device, seq: try seriesSequence(series), packageVersion: rendered.packageVersion, now: now)
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

    public static let jsonType = HTTPHeader("Content-Type", "application/json")
    public static let noStore = HTTPHeader("Cache-Control", "no-store")
}
