import Foundation
import PulseSystem

/// The operator's and the console's operations, shared by `pulse-server admin` and `/api/staff/…`:
/// both call these, so the rules (what may be minted for what, how the frontier moves) live once.
///
/// Every operation that changes something is recorded in the audit log (`AuditStorage`) as done by `actor`
/// from `client`: when it is done, in its own transaction (never done without its record); when it is
/// refused or fails, afterwards, in a transaction of its own (Administration+Audit.swift).
public struct Administration: Sendable {
    public let storage: any ServerStorage
    let clock: @Sendable () -> Int64
    /// Who acts: the audit log's actor of every operation.
    public let actor: AuditActor
    /// The client's address (the staff API's request); nil for the command line.
    public let client: String?

    /// Default lifetime of a device code.
    public static let deviceCodeLifetime: Int64 = 24 * 3600

    /// - Parameter actor: by default the command line, as the OS user running this process.
    public init(
        storage: any ServerStorage, clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) },
        actor: AuditActor? = nil, client: String? = nil
    ) {
        self.storage = storage
        self.clock = clock
        self.actor = actor ?? .cli(user: SystemUser.name(environment: ProcessInfo.processInfo.environment))
        self.client = client
    }

    /// The same operations, recorded as done by `actor` from `client`.
    public func acting(as actor: AuditActor, from client: String?) -> Administration {
        Administration(storage: storage, clock: clock, actor: actor, client: client)
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
        /// Staff tokens: the role and the session it is scoped to.
        public var staffRole: StaffRole?
        public var staffSession: String?
    }

    /// A single-use device code for a session or series that has been imported.
    public func createDeviceCode(scope: DeviceScope, lifetime: Int64 = deviceCodeLifetime) throws -> Minted {
        try recordingRefusal(.deviceCodeCreate, detail: "for \(scope)") {
            try checkExists(scope)
            return try mint(CredentialSecret.newDeviceCode(), kind: .deviceCode, scope: scope, lifetime: lifetime)
        }
    }

    /// A durable registration token for a series, optionally capped in devices, with its own enrollment rate and
    /// stream cap (nil fields: the server's defaults).
    public func createRegistrationToken(series: String, maxDevices: Int?, limits: TokenLimits = .defaults, lifetime: Int64? = nil) throws -> Minted {
        try recordingRefusal(.registrationTokenCreate, detail: "for series \(series)") {
            try checkedRegistrationToken(series: series, maxDevices: maxDevices, limits: limits, lifetime: lifetime)
        }
    }

    private func checkedRegistrationToken(series: String, maxDevices: Int?, limits: TokenLimits, lifetime: Int64?) throws -> Minted {
        try checkExists(.series(series))
        if let maxDevices, maxDevices < 1 { throw ServerError.badInput("--max-devices must be 1 or more, got \(maxDevices)") }
        if let rate = limits.enrollRate, rate < 1 { throw ServerError.badInput("--enroll-rate must be 1 or more, got \(rate)") }
        if let burst = limits.enrollBurst, burst < 1 { throw ServerError.badInput("--enroll-burst must be 1 or more, got \(burst)") }
        if let streams = limits.maxStreams, streams < 0 { throw ServerError.badInput("--max-streams must be 0 or more, got \(streams)") }
        return try mint(
            CredentialSecret.newToken(), kind: .registrationToken, scope: .series(series), maxDevices: maxDevices, limits: limits, lifetime: lifetime)
    }

    /// A bearer token for `/api/staff/…` with `role`, scoped to `session` (which must exist): a presenter
    /// needs one, an admin takes none, a moderator may have one (`StaffRole.refusal`).
    public func createStaffToken(role: StaffRole = .admin, session: String? = nil, lifetime: Int64? = nil) throws -> Minted {
        var detail = "role \(role.rawValue)"
        if let session { detail += ", session \(session)" }
        return try recordingRefusal(.staffTokenCreate, detail: detail) {
            if let refusal = role.refusal(session: session) { throw ServerError.badInput(refusal) }
            if let session { try checkExists(.session(session)) }
            return try mint(CredentialSecret.newToken(), kind: .staffToken, scope: nil, lifetime: lifetime, staffRole: role, staffSession: session)
        }
    }

    private func mint(
        _ text: String, kind: CredentialKind, scope: DeviceScope?, maxDevices: Int? = nil, limits: TokenLimits = .defaults, lifetime: Int64?,
        staffRole: StaffRole? = nil, staffSession: String? = nil
    ) throws -> Minted {
        if let lifetime, lifetime <= 0 { throw ServerError.badInput("the lifetime must be positive") }
        let now = clock()
        guard let hash = CredentialSecret.hash(text) else { throw ServerError(.storage, "a minted \(kind.rawValue) has no hash") }
        let expiresAt = lifetime.map { now + $0 }
        let listingId = CredentialSecret.listingId(hash: hash)
        let credential = NewCredential(
            hash: hash, kind: kind, scope: scope, maxDevices: maxDevices, limits: limits, createdAt: now, expiresAt: expiresAt, staffRole: staffRole,
            staffSession: staffSession)
        let detail = Self.mintDetail(scope: scope, maxDevices: maxDevices, role: credential.staffRole, session: credential.staffSession, expiresAt: expiresAt)
        try storage.addCredential(credential, audit: [entry(Self.mintAction(kind), target: listingId, detail: detail, at: now)])
        return Minted(
            text: text, listingId: listingId, kind: kind, scope: scope, maxDevices: maxDevices, limits: limits,
            expiresAt: expiresAt, staffRole: credential.staffRole, staffSession: credential.staffSession)
    }

    /// Revokes a credential given by its text, or by the 12-digit id `token list` shows, and with
    /// `withDevices` every device it enrolled (in one transaction: a leaked link's devices are cut at once;
    /// the token may already be revoked).
    ///
    /// Audited as `staff-token.revoke` when it names a staff token, else `token.revoke`, with the credential's
    /// listing id as target (never the text: it may be a live token typed by mistake into the wrong place).
    @discardableResult
    public func revokeToken(_ textOrId: String, withDevices: Bool = false) throws -> Revocation {
        let now = clock()
        let records = try storage.credentials()
        let byId = textOrId.utf8.count == 12 && textOrId.utf8.allSatisfy({ Identifier.isLowerHex($0) }) && records.contains(where: { $0.id == textOrId })
        let hash = byId ? nil : CredentialSecret.hash(textOrId)
        let listingId = byId ? textOrId : hash.map { CredentialSecret.listingId(hash: $0) }
        let named = records.filter { $0.id == listingId }
        let action: AuditAction = named.count == 1 && named[0].kind == .staffToken ? .staffTokenRevoke : .tokenRevoke
        let target = named.isEmpty ? nil : listingId
        let detail = withDevices ? "with its devices" : nil
        return try recordingRefusal(action, target: target, detail: detail) {
            let audit = [entry(action, target: target, detail: detail, at: now)]
            let revocation: Revocation?
            if byId, let listingId {
                revocation = try storage.revokeCredential(listingId: listingId, at: now, withDevices: withDevices, audit: audit)
            } else if let hash {
                revocation = try storage.revokeCredential(hash: hash, at: now, withDevices: withDevices, audit: audit)
            } else {
                throw ServerError.badInput("not a device code, token or token id")
            }
            // Never echo the text.
            guard let revocation else {
                throw ServerError.notFound(withDevices ? "no such token, or it and its devices were already revoked" : "no such token, or it was already revoked")
            }
            return revocation
        }
    }

    public func revokeDevice(id: String) throws {
        try recordingRefusal(.deviceRevoke, target: id) {
            let now = clock()
            guard try storage.revokeDevice(id: id, at: now, audit: [entry(.deviceRevoke, target: id, at: now)]) else {
                throw ServerError.notFound("no device \(id), or it was already revoked")
            }
        }
    }

    /// Changes a session's settings; the frontier only grows. Audited as one entry for each setting given
    /// (`session.state`, `session.frontier`, `session.download-rule`, `session.venue-rule`).
    public func setSession(id: String, _ update: SessionUpdate) throws -> SessionRecord {
        let now = clock()
        let audit = Self.auditEntries(update).map { entry($0.action, target: id, detail: $0.detail, at: now) }
        return try recordingRefusal(audit) {
            guard let record = try storage.updateSession(id: id, update, at: now, audit: audit) else { throw Self.noSession(id) }
            return record
        }
    }

    /// The presenter's advance.
    /// - Throws: `.notFound` for no such session, `.conflict` when the state has no frontier.
    public func advance(sessionId: String, to slide: Int) throws -> (session: SessionRecord, moved: Bool) {
        let now = clock()
        let audit = [entry(.sessionAdvance, target: sessionId, detail: "to \(slide)", at: now)]
        return try recordingRefusal(audit) {
            switch try storage.advance(sessionId: sessionId, to: slide, at: now, audit: audit) {
            case let .advanced(record, moved): return (record, moved)
            case .noSuchSession: throw Self.noSession(sessionId)
            case let .refused(state):
                throw ServerError.conflict("session \(sessionId) is \(state.rawValue): advances apply in rehearsal and live only")
            }
        }
    }

    /// `pulse-server import`: writes a package's server part (one transaction, with its audit entry).
    public func importContent(_ plan: ImportPlan, options: ImportOptions) throws -> ImportSummary {
        let now = clock()
        var parts = ["sessions " + (plan.sessions.isEmpty ? "none" : plan.sessions.map(\.id).joined(separator: ","))]
        if !plan.series.isEmpty { parts.append("series " + plan.series.map(\.id).joined(separator: ",")) }
        if options.replacePackage { parts.append("replace-package") }
        let audit = [entry(.import, target: plan.packageId.hex, detail: parts.joined(separator: "; "), at: now)]
        return try recordingRefusal(audit) { try storage.importContent(plan, options: options, at: now, audit: audit) }
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
