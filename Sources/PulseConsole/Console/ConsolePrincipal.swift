import PulseServerStorage
import PulseStaffAPI

/// Who is signed in: the staff API's principal, resolved from the session's token hash on every request
/// (`StaffAPI.principal(tokenHash:now:)`), so a revoked or expired token ends the console session at once.
///
/// Roles (docs/console.md, the staff API's permission table in StaffPermissions.swift): an admin may do
/// everything; a moderator reads the live view and report of every session (or one), and changes nothing;
/// a presenter has the clicker of one session (advance, go live, end). The pages ask `may` only to hide
/// what the role cannot use: the staff API decides every action again.
public struct ConsolePrincipal: Sendable, Equatable {
    public let staff: StaffPrincipal

    public init(_ staff: StaffPrincipal) { self.staff = staff }

    /// The staff token's listing id (never the token).
    public var tokenId: String { staff.tokenId }
    public var role: StaffRole { staff.role }
    /// The one session the token is scoped to; nil: every session.
    public var session: String? { staff.session }

    public var isAdmin: Bool { role == .admin }
    public var isPresenter: Bool { role == .presenter }

    /// Whether the principal may see session `id` at all (a scoped token sees its own only).
    public func maySee(session id: String) -> Bool { staff.sees(session: id) }

    /// The staff API's answer to "may this token do `action` on `session`?" (`StaffPrincipal.may`).
    public func may(_ action: StaffAction, session: String? = nil) -> Bool { staff.may(action, session: session) }
}
