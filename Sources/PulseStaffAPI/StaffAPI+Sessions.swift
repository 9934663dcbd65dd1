import Foundation
import PulseCore
import PulseHTTPServer
import PulseServerStorage
import PulseSyncAPI
import PulseServerStorage

extension StaffAPI {
    /// `POST`/`PATCH /api/staff/sessions/{id}` `{"state"?, "maxShown"?, "allowDownload"?, "venueNetworks"?}`:
    /// `admin session set`. Only what is given changes; `maxShown` moves the frontier with `max()`;
    /// `venueNetworks` replaces the list (`[]` unlocks).
    func setSession(_ id: String, _ request: HTTPRequest, administration: Administration) throws -> HTTPResponse {
        let fields = try body(request)
        var update = SessionUpdate()
        if let value = fields["state"], value != .null {
            guard let text = value.stringValue, let state = SessionState(rawValue: text) else {
                throw ServerError.badInput("state must be one of \(SessionState.names)")
            }
            update.state = state
        }
        if let value = fields["maxShown"], value != .null {
            guard let slide = value.intValue, slide >= 0 else { throw ServerError.badInput("maxShown must be a slide number, 0 or more") }
            update.maxShown = slide
        }
        if let value = fields["allowDownload"], value != .null {
            guard case let .bool(allow) = value else { throw ServerError.badInput("allowDownload must be true or false") }
            update.allowDownload = allow
        }
        if let value = fields["venueNetworks"], value != .null {
            guard let items = value.arrayValue else { throw ServerError.badInput("venueNetworks must be a list of networks like \"10.20.0.0/16\"") }
            update.venueNetworks = try items.map { item in
                guard let text = item.stringValue else { throw ServerError.badInput("venueNetworks must be a list of strings") }
                return try IPNetwork(parsing: text)
            }
        }
        guard !update.isEmpty else { throw ServerError.badInput("nothing to set: give state, maxShown, allowDownload or venueNetworks") }
        return deferredWrite("staff") { [self, update, administration] in
            let record = try administration.setSession(id: id, update)
            hub.poke()
            return SyncAnswers.json(200, StaffJSON.session(record), note: "staff:session-set")
        }
    }

    /// `POST /api/staff/sessions/{id}/advance {"maxShown": n}`: the presenter's clicker. In live the
    /// frontier becomes `max(frontier, n)` (clamped to the deck) and every stream of the session hears
    /// `advance` at once; in rehearsal the rehearsal frontier moves; other states answer 409.
    func advance(_ id: String, _ request: HTTPRequest, administration: Administration) throws -> HTTPResponse {
        let fields = try body(request)
        guard let slide = fields["maxShown"]?.intValue, slide >= 0 else { throw ServerError.badInput("maxShown: a slide number, 0 or more, is required") }
        return deferredWrite("staff") { [self, administration] in
            let (record, moved) = try administration.advance(sessionId: id, to: slide)
            if moved { hub.poke() }
            return SyncAnswers.json(200, ["session": StaffJSON.session(record), "moved": .bool(moved)], note: "staff:advance")
        }
    }

    /// `GET /api/staff/sessions/{id}/live`: the devices with a sample in the last `liveWindow` seconds,
    /// each with its newest sample and build, and how many event streams are open. Without `withDevices`
    /// (a presenter) the answer has the counts only: `deviceCount` instead of the `devices` rows.
    func liveView(_ id: String, now: Int64, withDevices: Bool) throws -> HTTPResponse {
        guard let session = try storage.session(id: id) else { throw Administration.noSession(id) }
        let samples = try storage.latestSamples(sessionId: id, since: now - configuration.liveWindow)
        let devices = try (withDevices ? samples : []).map { sample -> JSONValue in
            let device = try storage.device(id: sample.deviceId)
            return [
                "deviceId": .string(sample.deviceId), "name": .string(device?.name ?? ""), "platform": .string(sample.platform),
                "build": .string(sample.build), "receivedAt": .string(TimeText.iso(sample.receivedAt)), "connection": sample.connection,
            ]
        }
        var body: [String: JSONValue] = [
            "session": .string(id), "state": .string(session.state.rawValue), "maxShown": session.maxShown.map { .int($0) } ?? .null,
            "deckVersion": .int(session.deckVersion), "windowSeconds": .int(Int(configuration.liveWindow)), "at": .string(TimeText.iso(now)),
            "deviceCount": .int(samples.count), "openStreams": .int(hub.streamCount(session: id)),
        ]
        if withDevices { body["devices"] = .array(devices) }
        return SyncAnswers.json(200, .object(body), note: withDevices ? "staff:live" : "staff:live-counts")
    }

    /// `GET /api/staff/sessions/{id}/report`: the end-of-event report, JSON, or CSV with `?format=csv` or
    /// `Accept: text/csv`. Kept in `reports` with the console's page: while nothing changed (or, live, for a few
    /// seconds) a request costs a lookup, and the body it sends was made once.
    func report(_ id: String, _ request: HTTPRequest, query: ArraySlice<UInt8>) throws -> HTTPResponse {
        guard let session = try storage.session(id: id) else { throw Administration.noSession(id) }
        let kept = try reports.report(of: session, storage: storage, now: clock())
        let wantsCSV = query.split(separator: UInt8(ascii: "&")).contains { $0.elementsEqual(Array("format=csv".utf8)) }
            || (request.headers["accept"].map { String(decoding: $0, as: UTF8.self).lowercased().contains("text/csv") } ?? false)
        if wantsCSV {
            return HTTPResponse(
                status: 200,
                headers: [
                    HTTPHeader("Content-Type", "text/csv; charset=utf-8"), SyncAPI.noStore,
                    HTTPHeader("Content-Disposition", "attachment; filename=\"\(id)-report.csv\""),
                ],
                body: .bytes(kept.form("csv") { Array(kept.report.csv.utf8) }), note: "staff:report-csv")
        }
        // `SyncAnswers.json`'s answer, its body made once per kept report.
        return HTTPResponse(
            status: 200, headers: [HTTPHeader("Content-Type", "application/json"), SyncAPI.noStore],
            body: .bytes(kept.form("json") { kept.report.json.canonicalBytes + [0x0A] }), note: "staff:report")
    }
}

extension StaffAPI {
    /// The device scopes `principal` may see, the one rule of every device list (the staff API's `devices`,
    /// the console's devices page): nil for every device; for a token scoped to a session, the devices that
    /// may read that session (enrolled for the session, or for the series it belongs to).
    public func deviceScopes(visibleTo principal: StaffPrincipal) throws -> [DeviceScope]? {
        guard let own = principal.session else { return nil }
        let series = try storage.session(id: own)?.seriesId
        return [.session(own)] + (series.map { [.series($0)] } ?? [])
    }

    /// The devices `principal` may list (`deviceScopes(visibleTo:)`).
    func visibleDevices(to principal: StaffPrincipal) throws -> [DeviceRecord] {
        let devices = try storage.devices()
        guard let scopes = try deviceScopes(visibleTo: principal) else { return devices }
        return devices.filter { scopes.contains($0.scope) }
    }
}
