import Foundation

/// The operator's and the console's operations, shared by `pulse-server admin` and `/api/staff/…`:
/// both call these, so the rules (what may be minted for what, how the frontier moves) live once.
public struct Administration: Sendable {
    public let storage: any ServerStorage
    let clock: @Sendable () -> Int64

    /// Default lifetime of a device code.
    public static let deviceCodeLifetime: Int64 = 24 * 3600

    public init(storage: any ServerStorage, clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) {
        self.storage = storage
        self.clock = clock
    }

    /// A minted credential: the text (shown once, never stored) and what was stored.
    public struct Minted: Sendable {
        public var text: String
        public var listingId: String
        public var kind: CredentialKind
        public var scope: DeviceScope?
        public var maxDevices: Int?
        public var limits: TokenLimits = .defaults
        public var expiresAt: Int64?
    }

    /// A single-use device code for a session or series that has been imported.
    public func createDeviceCode(scope: DeviceScope, lifetime: Int64 = deviceCodeLifetime) throws -> Minted {
        try checkExists(scope)
        return try mint(CredentialSecret.newDeviceCode(), kind: .deviceCode, scope: scope, lifetime: lifetime)
    }

    /// A durable registration token for a series, optionally capped in devices, with its own enrollment rate and
    /// stream cap (nil fields: the server's defaults).
    public func createRegistrationToken(series: String, maxDevices: Int?, limits: TokenLimits = .defaults, lifetime: Int64? = nil) throws -> Minted {
        try checkExists(.series(series))
        if let maxDevices, maxDevices < 1 { throw ServerError.badInput("--max-devices must be 1 or more, got \(maxDevices)") }
        if let rate = limits.enrollRate, rate < 1 { throw ServerError.badInput("--enroll-rate must be 1 or more, got \(rate)") }
        if let burst = limits.enrollBurst, burst < 1 { throw ServerError.badInput("--enroll-burst must be 1 or more, got \(burst)") }
        if let streams = limits.maxStreams, streams < 0 { throw ServerError.badInput("--max-streams must be 0 or more, got \(streams)") }
        return try mint(
            CredentialSecret.newToken(), kind: .registrationToken, scope: .series(series), maxDevices: maxDevices, limits: limits, lifetime: lifetime)
    }

    /// A bearer token for `/api/staff/…`.
    public func createStaffToken(lifetime: Int64? = nil) throws -> Minted {
        try mint(CredentialSecret.newToken(), kind: .staffToken, scope: nil, lifetime: lifetime)
    }

    private func mint(
        _ text: String, kind: CredentialKind, scope: DeviceScope?, maxDevices: Int? = nil, limits: TokenLimits = .defaults, lifetime: Int64?
    ) throws -> Minted {
        if let lifetime, lifetime <= 0 { throw ServerError.badInput("the lifetime must be positive") }
        let now = clock()
        guard let hash = CredentialSecret.hash(text) else { throw ServerError(.storage, "a minted \(kind.rawValue) has no hash") }
        let expiresAt = lifetime.map { now + $0 }
        try storage.addCredential(NewCredential(
            hash: hash, kind: kind, scope: scope, maxDevices: maxDevices, limits: limits, createdAt: now, expiresAt: expiresAt))
        return Minted(
            text: text, listingId: CredentialSecret.listingId(hash: hash), kind: kind, scope: scope, maxDevices: maxDevices, limits: limits,
            expiresAt: expiresAt)
    }

    /// Revokes a credential given by its text, or by the 12-digit id `token list` shows, and with
    /// `withDevices` every device it enrolled (in one transaction: a leaked link's devices are cut at once;
    /// the token may already be revoked).
    @discardableResult
    public func revokeToken(_ textOrId: String, withDevices: Bool = false) throws -> Revocation {
        let now = clock()
        let revocation: Revocation?
        if textOrId.utf8.count == 12, textOrId.utf8.allSatisfy({ Identifier.isLowerHex($0) }),
           try storage.credentials().contains(where: { $0.id == textOrId })
        {
            revocation = try storage.revokeCredential(listingId: textOrId, at: now, withDevices: withDevices)
        } else if let hash = CredentialSecret.hash(textOrId) {
            revocation = try storage.revokeCredential(hash: hash, at: now, withDevices: withDevices)
        } else {
            throw ServerError.badInput("not a device code, token or token id")
        }
        // Never echo the text: it may be a live token typed by mistake into the wrong place.
        guard let revocation else {
            throw ServerError.notFound(withDevices ? "no such token, or it and its devices were already revoked" : "no such token, or it was already revoked")
        }
        return revocation
    }

    public func revokeDevice(id: String) throws {
        guard try storage.revokeDevice(id: id, at: clock()) else {
            throw ServerError.notFound("no device \(id), or it was already revoked")
        }
    }

    /// Changes a session's settings; the frontier only grows.
    public func setSession(id: String, _ update: SessionUpdate) throws -> SessionRecord {
        guard let record = try storage.updateSession(id: id, update, at: clock()) else { throw Self.noSession(id) }
        return record
    }

    /// The presenter's advance.
    /// - Throws: `.notFound` for no such session, `.conflict` when the state has no frontier.
    public func advance(sessionId: String, to slide: Int) throws -> (session: SessionRecord, moved: Bool) {
        switch try storage.advance(sessionId: sessionId, to: slide, at: clock()) {
        case let .advanced(record, moved): return (record, moved)
        case .noSuchSession: throw Self.noSession(sessionId)
        case let .refused(state):
            throw ServerError.conflict("session \(sessionId) is \(state.rawValue): advances apply in rehearsal and live only")
        }
    }

    private func checkExists(_ scope: DeviceScope) throws {
        switch scope {
        case let .session(id):
            guard try storage.session(id: id) != nil else { throw Self.noSession(id) }
        case let .series(id):
            guard try storage.series(id: id) != nil else { throw ServerError.notFound("no series \(id) (import its package first)") }
        }
    }

    public static func noSession(_ id: String) -> ServerError { .notFound("no session \(id) (import its package first)") }
}
