/// What a staff token may do (issue 18): the staff API checks it on every route (StaffAPI's permission table).
public enum StaffRole: String, CaseIterable, Sendable {
    /// Everything: minting and revoking, session state and rules, the audit log. Never scoped to a session.
    case admin
    /// Reads: sessions, the live view, reports, devices; scoped to one session or not. Changes nothing.
    case moderator
    /// The clicker of one session (advance, state live or ended) and its live count. Always scoped.
    case presenter

    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// Why `session` cannot go with this role, or nil when it can: a presenter needs a session, an admin
    /// takes none, a moderator may have one.
    public func refusal(session: String?) -> String? {
        switch (self, session) {
        case (.presenter, nil): "a presenter token needs a session"
        case (.admin, _?): "an admin token takes no session (give a moderator or presenter role to scope it)"
        default: nil
        }
    }
}

/// Who a staff request acts as: the token's listing id (never the token), its role, and the session it is
/// scoped to (nil: every session).
public struct StaffPrincipal: Equatable, Sendable {
    public var tokenId: String
    public var role: StaffRole
    public var session: String?

    public init(tokenId: String, role: StaffRole, session: String? = nil) {
        self.tokenId = tokenId
        self.role = role
        self.session = session
    }
}

/// An active staff token as the HTTP layer caches it: its hash, expiry, role and session.
public struct ActiveStaffToken: Equatable, Sendable {
    public var hash: [UInt8]
    public var expiresAt: Int64?
    public var role: StaffRole
    public var session: String?

    public init(hash: [UInt8], expiresAt: Int64?, role: StaffRole, session: String?) {
        self.hash = hash
        self.expiresAt = expiresAt
        self.role = role
        self.session = session
    }
}
