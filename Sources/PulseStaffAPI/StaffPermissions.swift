import PulseCore
import PulseHTTPServer
import PulseServerStorage
import PulseSyncAPI

/// Everything a staff token can be allowed to do: what each staff route needs (`StaffAPI.requirement`), and
/// what the console asks (`StaffPrincipal.may`) to hide a button the role cannot use. The raw value is the
/// action as a 403's message says it ("a presenter token may not mint device codes").
public enum StaffAction: String, CaseIterable, Sendable {
    case mintDeviceCode = "mint device codes"
    case mintRegistrationToken = "mint registration tokens"
    case mintStaffToken = "mint staff tokens"
    case listTokens = "list tokens"
    case revokeToken = "revoke tokens"
    case listDevices = "list devices"
    case revokeDevice = "revoke devices"
    case listSessions = "list sessions"
    case readSession = "read a session"
    /// `POST`/`PATCH sessions/{id}` with only `state`, set to `live` or `ended`: the presenter's go live and end.
    case goLiveOrEnd = "set a session live or ended"
    /// Any other session change: another state, the frontier, the download and venue rules.
    case changeSession = "change a session's state or rules"
    case advance = "advance a session"
    /// The live view's counts: state, frontier, open streams.
    case readLive = "read the live view"
    /// The live view's device rows (names, platforms, builds, connections).
    case readLiveDevices = "read the live view's devices"
    case readReport = "read the report"
    case readAudit = "read the audit log"

    /// Actions on one session: a scoped token may do them on its own session only. The others are either
    /// lists (which a scoped token sees filtered to its session) or not about a session.
    public var isPerSession: Bool {
        switch self {
        case .readSession, .goLiveOrEnd, .changeSession, .advance, .readLive, .readLiveDevices, .readReport: true
        default: false
        }
    }
}

extension StaffRole {
    /// The permission table of roles: what each may do (on its own session, when the token has one).
    public var actions: Set<StaffAction> {
        switch self {
        case .admin: Set(StaffAction.allCases)
        case .moderator: [.listDevices, .listSessions, .readSession, .readLive, .readLiveDevices, .readReport]
        case .presenter: [.listSessions, .readSession, .goLiveOrEnd, .advance, .readLive]
        }
    }
}

extension StaffPrincipal {
    /// True when this token may do `action` on `session` (nil: an action that is not about one session, or
    /// "on the session this token may act on"). The staff API answers 403 exactly when this is false.
    public func may(_ action: StaffAction, session: String?) -> Bool {
        guard role.actions.contains(action) else { return false }
        guard action.isPerSession, let own = self.session, let session else { return true }
        return own == session
    }

    /// True when a list shows `session` to this token (a scoped token sees only its own).
    public func sees(session: String) -> Bool { self.session.map { $0 == session } ?? true }

    /// The message of a 403: the role, its scope, and the action refused.
    func refusal(_ action: StaffAction, session: String?) -> String {
        let token = "a \(role.rawValue) token" + (self.session.map { " of session \($0)" } ?? "")
        if role.actions.contains(action), let session { return "\(token) may not \(action.rawValue) on session \(session)" }
        return "\(token) may not \(action.rawValue)"
    }
}

extension StaffAPI {
    /// The route table of permissions: what `method parts` needs, and the session it acts on; nil for a
    /// route that does not exist (answered 404 by the router). `POST`/`PATCH sessions/{id}` needs
    /// `goLiveOrEnd` when its body sets only `state` to `live` or `ended`, else `changeSession`.
    static func requirement(_ request: HTTPRequest, _ parts: [String]) -> (action: StaffAction, session: String?)? {
        let method = request.method
        let isRead = method == .get || method == .head
        let isWrite = method == .post || method == .other("PATCH")
        switch (parts.first ?? "", parts.count) {
        case ("device-codes", 1) where method == .post: return (.mintDeviceCode, nil)
        case ("registration-tokens", 1) where method == .post: return (.mintRegistrationToken, nil)
        case ("staff-tokens", 1) where method == .post: return (.mintStaffToken, nil)
        case ("tokens", 1) where isRead: return (.listTokens, nil)
        case ("tokens", 2) where parts[1] == "revoke" && method == .post: return (.revokeToken, nil)
        case ("devices", 1) where isRead: return (.listDevices, nil)
        case ("devices", 3) where parts[2] == "revoke" && method == .post: return (.revokeDevice, nil)
        case ("sessions", 1) where isRead: return (.listSessions, nil)
        case ("sessions", 2) where isRead: return (.readSession, parts[1])
        case ("sessions", 2) where isWrite: return (isGoLiveOrEnd(request.body) ? .goLiveOrEnd : .changeSession, parts[1])
        case ("sessions", 3) where parts[2] == "advance" && method == .post: return (.advance, parts[1])
        case ("sessions", 3) where parts[2] == "live" && isRead: return (.readLive, parts[1])
        case ("sessions", 3) where parts[2] == "report" && isRead: return (.readReport, parts[1])
        case ("audit", 1) where isRead: return (.readAudit, nil)
        default: return nil
        }
    }

    /// True when a session change's body is `{"state": "live"}` or `{"state": "ended"}` and nothing else.
    static func isGoLiveOrEnd(_ body: [UInt8]?) -> Bool {
        guard case let .success(fields) = RequestJSON.object(body), fields.count == 1, let state = fields["state"]?.stringValue else { return false }
        return state == SessionState.live.rawValue || state == SessionState.ended.rawValue
    }

    /// The 403 of a refused action, recorded in the audit log as `refused:forbidden` when it is a change.
    func forbidden(
        _ principal: StaffPrincipal, _ action: StaffAction, session: String?, request: HTTPRequest, parts: [String], administration: Administration
    ) -> HTTPResponse {
        let message = principal.refusal(action, session: session)
        let answer = SyncAnswers.json(403, ["error": .string("forbidden"), "message": .string(message)], note: "staff:forbidden")
        guard let (audited, target) = StaffAPI.auditedAction(request.method, parts) else { return answer }
        return deferredWrite("staff") {
            administration.recordRefusal(audited, target: target, detail: message, result: .refused("forbidden"))
            return answer
        }
    }
}
