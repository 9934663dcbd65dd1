import PulseCore
import PulseHTTPServer
import PulseServerStorage

extension SyncAPI {
    /// `GET /api/sync/events?session=ID`: device-signed Server-Sent Events (`EventHub`). The connection is
    /// suspended in libmicrohttpd between events (`HTTPEventStream`), heartbeats are comment lines after 15 s
    /// of silence, `Last-Event-ID` resumes from the session's change log.
    func events(_ request: HTTPRequest, device: SyncCache.Device, query: ArraySlice<UInt8>) throws -> HTTPResponse {
        guard let id = Self.sessionParameter(query), try entitledSession(device, id) != nil else {
            return HTTPResponse(answers.notFound, "no:session")
        }
        // Digits only (no sign, at most 18): anything else is no resume point, so the stream starts with a snapshot.
        let lastEventId = request.headers["last-event-id"].flatMap { BoundedDecimal.parse($0) }.map(Int64.init)
        let hub = self.hub
        let stream = HTTPEventStream(heartbeat: Array(":\n".utf8), maxPendingBytes: 256 << 10) { stream, _ in
            hub.remove(stream, session: id)
        }
        // A registration token's devices share its cap on open streams (a leaked link must not take every connection).
        let token = try cache.registrationToken(listingId: device.record.credentialId)
        let cap = token.map { $0.limits.maxStreams ?? configuration.tokenMaxStreams } ?? .max
        guard try hub.subscribe(stream, device: device.record.id, session: id, lastEventId: lastEventId, token: token?.listingId, maxStreams: cap) else {
            return answers.rateLimited(retryAfter: configuration.streamRetrySeconds, note: "events:token-streams-full")
        }
        keyHolders.watching(session: id, device: device.record.id)
        return HTTPResponse(
            status: 200,
            headers: [
                HTTPHeader("Content-Type", "text/event-stream"), Self.noStore, HTTPHeader("X-Accel-Buffering", "no"),
            ],
            body: .stream(stream), note: "events")
    }
}
