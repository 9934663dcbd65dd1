import Foundation
import PulseCore
import PulseHTTPServer
import PulseServerStorage
import PulseSyncAPI
import PulseServerStorage

/// `/api/staff/…`: every `pulse-server admin` operation over HTTP for the console and the presenter's
/// clicker, with `Authorization: Bearer <staff token>`. Each calls `Administration`, as the CLI does.
/// Secrets only travel in bodies (never in a path or query, which the access log records).
///
/// | method and path | body → answer |
/// |---|---|
/// | `POST device-codes` | `{"session"|"series", "expires"?}` → 201 minted |
/// | `POST registration-tokens` | `{"series", "maxDevices"?, "expires"?}` → 201 minted |
/// | `POST staff-tokens` | `{"role"?, "session"?, "expires"?}` → 201 minted (role: admin by default) |
/// | `GET tokens` | → credentials (ids, never secrets) |
/// | `POST tokens/revoke` | `{"token"}` (text or listing id) → 200 |
/// | `GET devices` · `POST devices/{id}/revoke` | → devices · the device |
/// | `GET sessions` · `GET sessions/{id}` | → sessions · the session |
/// | `POST`/`PATCH sessions/{id}` | `{"state"?, "maxShown"?, "allowDownload"?, "venueNetworks"?}` → the session |
/// | `POST sessions/{id}/advance` | `{"maxShown"}` → the session and `moved` |
/// | `GET sessions/{id}/live` · `GET sessions/{id}/report` | live view · report (JSON, or CSV with `?format=csv` / `Accept: text/csv`) |
/// | `GET audit?after=&since=&limit=` | the audit log, oldest first, paged by id (StaffAPI+Audit.swift) |
///
/// Every change (each `POST`/`PATCH` above) is recorded in the audit log with the token's listing id, its
/// role and the client's address: done, refused (a bad body included) or failed. A request whose token
/// does not authenticate is not an action and is not recorded.
///
/// Minted: `{"kind","id","secret","scope"?,"maxDevices"?,"role"?,"session"?,"expiresAt"?}`, the same as `admin … --json`.
/// Errors: `{"error","message"}` with 400 (bad input), 403 (`forbidden`: the token's role may not do it),
/// 404 (no such thing), 409 (a refused change); `{"error":"rateLimited"}` with 429 and `Retry-After` when a
/// presenter's or moderator's token changes (or tries to) faster than `SyncConfiguration.staffChangeLimit`.
///
/// Roles (StaffPermissions.swift): before a route runs, `requirement` names the `StaffAction` it needs and
/// the session it acts on, and `StaffPrincipal.may` decides; a refused change is audited `refused:forbidden`.
/// A token scoped to a session sees only that session in `GET sessions` (and, a moderator, only its devices
/// in `GET devices`); a presenter's `GET sessions/{id}/live` has the counts without the device rows.
///
/// pulse-server's `SyncServer` routes `/api/staff/…` here; the storage, the cache (staff tokens), the event
/// hub (a change is heard at once) and the write queue are the sync responder's, shared.
public final class StaffAPI: HTTPResponder {
    let sync: SyncAPI
    let administration: Administration
    /// The reports made last: the report route's and the console's report page's one keeping.
    public let reports = ReportCache()

    public init(sync: SyncAPI) {
        self.sync = sync
        let clock = sync.clock
        self.administration = Administration(storage: sync.storage, clock: { Int64(clock().rounded(.down)) })
    }

    static let prefix = Array("/api/staff/".utf8)

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let (path, query) = SyncAPI.split(request.target)
        return sync.answer(request, path: path) {
            guard path.starts(with: Self.prefix) else { return HTTPResponse(answers.notFound, "no:route") }
            return try staff(request, path: path.dropFirst(Self.prefix.count), query: query)
        }
    }

    /// Nothing: the server that routes here logs every exchange once (`SyncAPI.finished`).
    public func finished(_ exchange: HTTPExchange) {}

    var storage: any ServerStorage { sync.storage }
    var cache: SyncCache { sync.cache }
    var answers: SyncAnswers { sync.answers }
    var hub: EventHub { sync.hub }
    var configuration: SyncConfiguration { sync.configuration }
    var clock: @Sendable () -> Double { sync.clock }
    func seconds(_ now: Double) -> Int64 { sync.seconds(now) }
    func isRead(_ request: HTTPRequest) -> Bool { sync.isRead(request) }
    func deferredWrite(_ note: String, _ work: @escaping @Sendable () throws -> HTTPResponse) -> HTTPResponse {
        sync.deferredWrite(note, work)
    }

    /// The JSON answer of a `ServerError` that is the request's fault.
    static func error(_ error: ServerError) -> HTTPResponse { SyncAnswers.error(error) }

    /// The bearer token of `Authorization`, if the header is `Bearer <token>`.
    static func bearer(_ header: [UInt8]?) -> String? {
        guard let header, header.count > 7, header.count < 200 else { return nil }
        let scheme = header.prefix(7).map { $0 | 0x20 }
        guard scheme.elementsEqual(Array("bearer ".utf8)) else { return nil }
        return String(decoding: header.dropFirst(7).drop { $0 == 0x20 }, as: UTF8.self)
    }

    /// A lifetime field: seconds as a number, or `"90s"`, `"30m"`, `"2h"`, `"7d"`.
    static func lifetime(_ value: JSONValue?) throws -> Int64? {
        switch value {
        case nil, .null?: return nil
        case let .int(seconds)?:
            guard (1...366 * 86_400).contains(seconds) else { throw ServerError.badInput("expires must be 1 s to 366 days") }
            return Int64(seconds)
        case let .string(text)?:
            guard let seconds = Lifetime.seconds(text) else { throw ServerError.badInput("expires must be a duration like 90s, 30m, 2h or 7d") }
            return seconds
        default:
            throw ServerError.badInput("expires must be a number of seconds or a duration like 2h")
        }
    }

    /// The answer (and `admin … --json`) for a minted credential.
    public static func minted(_ minted: Administration.Minted) -> JSONValue {
        var fields: [String: JSONValue] = ["kind": .string(minted.kind.rawValue), "id": .string(minted.listingId), "secret": .string(minted.text)]
        if let scope = minted.scope { fields["scope"] = ["kind": .string(scope.kind), "id": .string(scope.id)] }
        if let max = minted.maxDevices { fields["maxDevices"] = .int(max) }
        if let role = minted.staffRole { fields["role"] = .string(role.rawValue) }
        if let session = minted.staffSession { fields["session"] = .string(session) }
        add(minted.limits, to: &fields)
        if let expires = minted.expiresAt { fields["expiresAt"] = .string(TimeText.iso(expires)) }
        return .object(fields)
    }

    /// A registration token's own limits as fields (`enrollRate`, `enrollBurst`, `maxStreams`), those it sets.
    public static func add(_ limits: TokenLimits, to fields: inout [String: JSONValue]) {
        if let rate = limits.enrollRate { fields["enrollRate"] = .int(rate) }
        if let burst = limits.enrollBurst { fields["enrollBurst"] = .int(burst) }
        if let streams = limits.maxStreams { fields["maxStreams"] = .int(streams) }
    }

    /// An optional whole-number field within `range`; nil when absent or null.
    static func wholeNumber(_ fields: [String: JSONValue], _ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let value = fields[name], value != .null else { return nil }
        guard let number = value.intValue, range.contains(number) else {
            throw ServerError.badInput("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// Who the staff token whose SHA-256 is `tokenHash` acts as at `now` (Unix seconds), or nil when it is
    /// unknown, revoked or expired. Revalidates the cache first, so a revocation is seen at once. The console
    /// calls it on every request with the token its session cookie stands for, then `respond(to:as:)`.
    public func principal(tokenHash: [UInt8], now: Int64) throws -> StaffPrincipal? {
        try cache.revalidate()
        return try cache.staffPrincipal(hash: tokenHash, now: now)
    }

    /// Routes `request` (`/api/staff/…`) as `principal`, exactly as a bearer request is routed once its
    /// token authenticated: the same permission check (403), audit log entries and answers. The caller has
    /// authenticated `principal` for this request (`principal(tokenHash:now:)`); the request's own
    /// `Authorization` header is not read.
    public func respond(to request: HTTPRequest, as principal: StaffPrincipal) -> HTTPResponse {
        let (path, query) = SyncAPI.split(request.target)
        return sync.answer(request, path: path) {
            guard path.starts(with: Self.prefix) else { return HTTPResponse(answers.notFound, "no:route") }
            try cache.revalidate()
            return try staff(request, path: path.dropFirst(Self.prefix.count), query: query, as: principal, now: seconds(clock()))
        }
    }

    /// Authenticates, then routes `/api/staff/<path>`.
    func staff(_ request: HTTPRequest, path: ArraySlice<UInt8>, query: ArraySlice<UInt8>) throws -> HTTPResponse {
        let now = seconds(clock())
        guard let token = StaffAPI.bearer(request.headers["authorization"]), CredentialSecret.isTokenShaped(token),
              let hash = CredentialSecret.hash(token), let principal = try principal(tokenHash: hash, now: now)
        else { return HTTPResponse(answers.unauthorized, "staff:unauthorized") }
        return try staff(request, path: path, query: query, as: principal, now: now)
    }

    /// Checks the permission table, then routes, as `principal`.
    private func staff(
        _ request: HTTPRequest, path: ArraySlice<UInt8>, query: ArraySlice<UInt8>, as principal: StaffPrincipal, now: Int64
    ) throws -> HTTPResponse {
        let administration = self.administration.acting(
            as: .staff(tokenId: principal.tokenId, role: principal.role.rawValue), from: sync.clientAddress(of: request)?.description)
        let parts = path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        // A presenter's or moderator's changes, done or refused, each write an audit row: at a clicker's pace
        // at most (`staffChangeLimit`). Past it, 429 before anything is decided or recorded, as a 401 is not.
        if principal.role != .admin, StaffAPI.auditedAction(request.method, parts) != nil,
           case let .limited(retryAfter) = try storage.takeRateToken("staff-change " + principal.tokenId, limit: configuration.staffChangeLimit, at: clock())
        {
            return answers.rateLimited(retryAfter: retryAfter, note: "staff:rate-limited")
        }
        if let (action, session) = StaffAPI.requirement(request, parts), !principal.may(action, session: session) {
            return forbidden(principal, action, session: session, request: request, parts: parts, administration: administration)
        }
        do {
            return try staffRoute(request, parts: parts, query: query, now: now, principal: principal, administration: administration)
        } catch let error as ServerError where error.kind != .storage && error.kind != .unsafeFile {
            // A change refused before it reached `Administration` (a bad body) is recorded too.
            guard let (action, target) = StaffAPI.auditedAction(request.method, parts) else { return StaffAPI.error(error) }
            return deferredWrite("staff") {
                administration.recordRefusal(action, target: target, error)
                return StaffAPI.error(error)
            }
        }
    }

    private func staffRoute(
        _ request: HTTPRequest, parts: [String], query: ArraySlice<UInt8>, now: Int64, principal: StaffPrincipal,
        administration: Administration
    ) throws -> HTTPResponse {
        let method = request.method
        let isWrite = method == .post || method == .other("PATCH")
        switch (parts.first ?? "", parts.count) {
        case ("device-codes", 1) where method == .post,
             ("registration-tokens", 1) where method == .post,
             ("staff-tokens", 1) where method == .post:
            return try mint(parts[0], request, administration: administration)
        case ("tokens", 1) where isRead(request):
            let recent = try storage.recentEnrollments(since: now - 60)
            return SyncAnswers.json(200, .array(try storage.credentials().map { StaffJSON.credential($0, recent: recent[$0.id] ?? 0) }), note: "staff:tokens")
        case ("tokens", 2) where parts[1] == "revoke" && method == .post:
            let fields = try body(request)
            guard let text = fields["token"]?.stringValue else { throw ServerError.badInput("token: give the code, token or listing id") }
            var withDevices = false
            if let value = fields["withDevices"], value != .null {
                guard case let .bool(flag) = value else { throw ServerError.badInput("withDevices must be true or false") }
                withDevices = flag
            }
            return deferredWrite("staff") { [self, withDevices, administration] in
                let revocation = try administration.revokeToken(text, withDevices: withDevices)
                if revocation.devices > 0 { hub.poke() }
                var answer: [String: JSONValue] = ["revoked": true, "tokenWasActive": .bool(revocation.credential)]
                if withDevices { answer["devicesRevoked"] = .int(revocation.devices) }
                return SyncAnswers.json(200, .object(answer), note: "staff:token-revoked")
            }
        case ("devices", 1) where isRead(request):
            return SyncAnswers.json(200, .array(try visibleDevices(to: principal).map { StaffJSON.device($0) }), note: "staff:devices")
        case ("devices", 3) where parts[2] == "revoke" && method == .post:
            let id = parts[1]
            return deferredWrite("staff") { [self, administration] in
                try administration.revokeDevice(id: id)
                hub.poke()
                return SyncAnswers.json(200, try storage.device(id: id).map { StaffJSON.device($0) } ?? .null, note: "staff:device-revoked")
            }
        case ("sessions", 1) where isRead(request):
            let sessions = try storage.sessions().filter { principal.sees(session: $0.id) }
            return SyncAnswers.json(200, .array(sessions.map { StaffJSON.session($0) }), note: "staff:sessions")
        case ("sessions", 2) where isRead(request):
            guard let session = try storage.session(id: parts[1]) else { throw Administration.noSession(parts[1]) }
            return SyncAnswers.json(200, StaffJSON.session(session), note: "staff:session")
        case ("sessions", 2) where isWrite:
            return try setSession(parts[1], request, administration: administration)
        case ("sessions", 3) where parts[2] == "advance" && method == .post:
            return try advance(parts[1], request, administration: administration)
        case ("sessions", 3) where parts[2] == "live" && isRead(request):
            return try liveView(parts[1], now: now, withDevices: principal.may(.readLiveDevices, session: parts[1]))
        case ("sessions", 3) where parts[2] == "report" && isRead(request):
            return try report(parts[1], request, query: query)
        case ("audit", 1) where isRead(request):
            return try audit(query: query)
        default:
            return HTTPResponse(answers.notFound, "staff:no-route")
        }
    }

    /// The request body as a JSON object (an empty body is `{}`).
    func body(_ request: HTTPRequest) throws -> [String: JSONValue] {
        if request.body?.isEmpty ?? true { return [:] }
        switch RequestJSON.object(request.body) {
        case let .success(fields): return fields
        case .failure: throw ServerError.badInput("the body must be a JSON object")
        }
    }

    private func mint(_ kind: String, _ request: HTTPRequest, administration: Administration) throws -> HTTPResponse {
        // Everything the body says is checked here, before the write: a refusal of it is recorded by `staff`.
        let fields = try body(request)
        let lifetime = try StaffAPI.lifetime(fields["expires"])
        let work: @Sendable () throws -> Administration.Minted
        switch kind {
        case "device-codes":
            let scope: DeviceScope
            switch (fields["series"]?.stringValue, fields["session"]?.stringValue) {
            case let (series?, nil): scope = .series(series)
            case let (nil, session?): scope = .session(session)
            default: throw ServerError.badInput("give exactly one of \"session\" or \"series\"")
            }
            work = { try administration.createDeviceCode(scope: scope, lifetime: lifetime ?? Administration.deviceCodeLifetime) }
        case "registration-tokens":
            guard let series = fields["series"]?.stringValue else { throw ServerError.badInput("series: required") }
            let maxDevices = try StaffAPI.wholeNumber(fields, "maxDevices", in: 1...10_000_000)
            let limits = TokenLimits(
                enrollRate: try StaffAPI.wholeNumber(fields, "enrollRate", in: 1...1_000_000),
                enrollBurst: try StaffAPI.wholeNumber(fields, "enrollBurst", in: 1...1_000_000),
                maxStreams: try StaffAPI.wholeNumber(fields, "maxStreams", in: 0...1_000_000))
            work = { try administration.createRegistrationToken(series: series, maxDevices: maxDevices, limits: limits, lifetime: lifetime) }
        default:
            var role = StaffRole.admin
            if let value = fields["role"], value != .null {
                guard let text = value.stringValue, let named = StaffRole(rawValue: text) else {
                    throw ServerError.badInput("role must be one of \(StaffRole.names)")
                }
                role = named
            }
            var session: String?
            if let value = fields["session"], value != .null {
                guard let text = value.stringValue else { throw ServerError.badInput("session must be a session id") }
                session = text
            }
            if let refusal = role.refusal(session: session) { throw ServerError.badInput(refusal) }
            work = { [role, session] in try administration.createStaffToken(role: role, session: session, lifetime: lifetime) }
        }
        return deferredWrite("staff") { SyncAnswers.json(201, StaffAPI.minted(try work()), note: "staff:minted") }
    }
}
