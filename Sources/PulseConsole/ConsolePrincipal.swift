/// Who is signed in, resolved from the session's token hash on every request (a revoked or expired token
/// ends the console session at once).
///
/// Roles follow issue 18: an admin may do everything; a moderator sees the live view and report of every
/// session (or one, `session`), and changes nothing; a presenter has the clicker of one session.
public struct ConsolePrincipal: Sendable, Equatable {
    public enum Role: String, Sendable {
        case admin, moderator, presenter
    }

    /// The staff token's listing id (never the token).
    public let tokenId: String
    public let role: Role
    /// The one session the token is scoped to; nil: every session.
    public let session: String?

    public init(tokenId: String, role: Role, session: String?) {
        self.tokenId = tokenId
        self.role = role
        self.session = session
    }

    public var isAdmin: Bool { role == .admin }
    public var isPresenter: Bool { role == .presenter }

    /// Whether the principal may see session `id` at all.
    public func maySee(session id: String) -> Bool { session == nil || session == id }
}
