import PulseCrypto
import PulseHTTPServer
import PulseServerStorage

extension SyncAPI {
    /// A device-scoped route and what it needs from the target.
    enum DeviceRoute {
        case keys(ArraySlice<UInt8>)
        case manifest(ArraySlice<UInt8>)
        case events(ArraySlice<UInt8>)
        case seriesManifest(String)
        case diag(String)

        /// The session the route is about, as sent (checked against the database with the rate token); nil for
        /// a series manifest.
        var sessionId: String? {
            switch self {
            case let .keys(query), let .manifest(query), let .events(query): SyncAPI.sessionParameter(query)
            case let .diag(id): id
            case .seriesManifest: nil
            }
        }

        /// Read routes take GET (and HEAD, but for events); diag takes POST. Anything else is the flat "no".
        func allows(_ method: HTTPMethod) -> Bool {
            switch self {
            case .keys, .manifest, .seriesManifest: method == .get || method == .head
            case .events: method == .get
            case .diag: method == .post
            }
        }
    }

    /// Every device-scoped request: the checks in their fixed order, then the route.
    ///
    /// 1. the method the route takes, and exactly one well-formed `X-Pulse-Device` (else the flat 404);
    /// 2. the timestamp within ±`signatureWindow` of the server's clock (else `401 staleSignature`),
    ///    before the device is looked up, so that answer is the same for every device id;
    /// 3. the device: known and not revoked (else the flat 404);
    /// 4. the signature over the canonical string (else the flat 404). Steps 3 and 4 cost the same for every
    ///    "no": an unknown or revoked device's signature is verified against a decoy key, and every such answer
    ///    reads the device from storage once (what an unknown id's cache miss does), so the time the flat 404
    ///    takes does not tell whether a device id exists or was revoked;
    /// 5. the device's rate limit (else 429 with Retry-After);
    /// 6. the route: the session exists and the device is entitled to it (else the flat 404); a POST
    ///    checks its body, then records its signature against replay together with its effect, in one
    ///    transaction (a replay: the flat 404).
    func deviceRoute(_ request: HTTPRequest, _ route: DeviceRoute) throws -> HTTPResponse {
        guard route.allows(request.method) else { return HTTPResponse(answers.notFound, "no:method") }
        let lines = request.headers.values("x-pulse-device")
        guard lines.count == 1, let signed = DeviceSignature.parse(lines[0]) else { return HTTPResponse(answers.notFound, "no:header") }
        let now = clock()
        let second = seconds(now)
        guard abs(signed.timestamp - second) <= configuration.signatureWindow else { return HTTPResponse(answers.stale, "stale") }
        try cache.revalidate()
        let found = try cache.device(signed.deviceId)
        let canonical = signed.canonical(method: request.method.description, target: request.target, body: request.body)
        let active = found.flatMap { $0.record.isRevoked ? nil : $0 }
        let verified = (active?.key ?? Self.decoyKey).map { signed.isValid(for: canonical, key: $0) } ?? false
        guard let device = active, verified else {
            // An unknown id was a cache miss, i.e. a storage read: the other refusals read the device once too.
            if found != nil { _ = try storage.device(id: signed.deviceId) }
            let note = found == nil ? "no:unknown-device" : active == nil ? "no:revoked" : "no:bad-signature"
            return HTTPResponse(answers.notFound, note)
        }
        let (decision, check) = try storage.takeRateToken(
            "device " + device.record.id, limit: configuration.deviceLimit, at: now, checking: device.record.id, session: route.sessionId)
        if case let .limited(retryAfter) = decision {
            return answers.rateLimited(retryAfter: retryAfter, note: "rate-limited")
        }
        // Another instance's change this instance has not heard of yet (its notification is a moment behind the
        // commit): catch up now, so every instance serves what the database holds the moment a change answered.
        if let check, case let behind = cache.behind(check, device: device.record.id, session: route.sessionId), !behind.isEmpty {
            storage.catchUp(behind)
            try cache.revalidate()
            guard let current = try cache.device(signed.deviceId), !current.record.isRevoked else { return HTTPResponse(answers.notFound, "no:revoked") }
        }
        switch route {
        case let .keys(query): return try keys(request, device: device, query: query, now: second)
        case let .manifest(query): return try manifest(request, device: device, query: query, now: second)
        case let .seriesManifest(id): return try seriesManifest(request, device: device, series: id, now: second)
        case let .events(query): return try events(request, device: device, query: query)
        case let .diag(id): return try diag(request, device: device, session: id, signature: signed, now: second)
        }
    }

    /// What an unknown or revoked device's signature is verified against, so that refusal costs what a bad
    /// signature costs. A random key of this process: no signature verifies against it.
    static let decoyKey: P256.PublicKey? = try? P256.PrivateKey().publicKey

    /// The session `id` if it exists and `device` may read it; nil otherwise (the caller answers the
    /// flat 404 either way).
    func entitledSession(_ device: SyncCache.Device, _ id: String) throws -> SessionRecord? {
        guard Identifier.isValid(id), let session = try cache.session(id) else { return nil }
        switch device.record.scope {
        case let .session(allowed):
            return allowed == id ? session : nil
        case let .series(series):
            guard let record = try cache.series(series), record.sessionIds.contains(id) else { return nil }
            return session
        }
    }

    /// The `session=` value of a query (the first one), as sent: session ids need no escaping.
    static func sessionParameter(_ query: ArraySlice<UInt8>) -> String? {
        for pair in query.split(separator: UInt8(ascii: "&")) where pair.starts(with: sessionKey) {
            return String(decoding: pair.dropFirst(sessionKey.count), as: UTF8.self)
        }
        return nil
    }

    private static let sessionKey = Array("session=".utf8)
}
