/// One row of the audit log: a staff or admin action, who did it, from where, and how it ended. Never a
/// secret: no token or code text, no hash, no key; a credential is named by its listing id only.
///
/// Failed authentication is not an action (nobody acted): it is rate limiting's business, not the log's.
public struct AuditEntry: Equatable, Sendable {
    /// Unix seconds, the server's clock.
    public var at: Int64
    public var actor: AuditActor
    public var action: AuditAction
    /// What the action was on: a session id, a device id, a credential's listing id, a package id; nil when
    /// there is none (a mint that was refused, a revoke of a token that is unknown).
    public var target: String?
    /// A short, non-secret note: a minted code's scope and expiry, the state a session was set to, the slide
    /// an advance asked for.
    public var detail: String?
    /// The client's address (staff API); nil for the CLI.
    public var client: String?
    public var result: AuditResult

    /// The longest target and detail kept (characters): a hostile path segment is cut, not refused.
    public static let maxTextLength = 200

    public init(
        at: Int64, actor: AuditActor, action: AuditAction, target: String? = nil, detail: String? = nil, client: String? = nil,
        result: AuditResult = .ok
    ) {
        self.at = at
        self.actor = actor
        self.action = action
        self.target = target.map(Self.bounded)
        self.detail = detail.map(Self.bounded)
        self.client = client.map(Self.bounded)
        self.result = result
    }

    static func bounded(_ text: String) -> String {
        text.unicodeScalars.count <= maxTextLength ? text : String(String.UnicodeScalarView(text.unicodeScalars.prefix(maxTextLength)))
    }
}

/// A stored audit row: its id (monotonic: a later row has a larger id) and the entry.
public struct AuditRecord: Equatable, Sendable {
    public var id: Int64
    public var entry: AuditEntry

    public init(id: Int64, entry: AuditEntry) {
        self.id = id
        self.entry = entry
    }

    /// A stored row, refused loudly when it holds what this program never writes.
    static func stored(
        id: Int64, at: Int64, actorKind: String, actorId: String, role: String?, action: String, target: String?, detail: String?,
        client: String?, result: String
    ) throws -> AuditRecord {
        guard let kind = AuditActor.Kind(rawValue: actorKind), let action = AuditAction(rawValue: action), let result = AuditResult(text: result) else {
            throw ServerError(.storage, "audit row \(id) holds an unknown actor kind, action or result")
        }
        return AuditRecord(
            id: id,
            entry: AuditEntry(
                at: at, actor: AuditActor(kind: kind, id: actorId, role: role), action: action, target: target, detail: detail, client: client,
                result: result))
    }
}

/// Who acted: a staff token (its listing id, never the token) with the role it acted in, or the command
/// line with the operating-system user that ran it.
public struct AuditActor: Equatable, Sendable {
    public enum Kind: String, Sendable {
        case staff
        case cli
    }

    public var kind: Kind
    /// A staff token's listing id, or the OS user's name.
    public var id: String
    /// The role of the staff token that acted (`StaffRole`: "admin", "moderator" or "presenter"); nil for
    /// the command line, which whoever holds the database runs with every power.
    public var role: String?

    public init(kind: Kind, id: String, role: String?) {
        self.kind = kind
        self.id = AuditEntry.bounded(id)
        self.role = role
    }

    public static func staff(tokenId: String, role: String = "admin") -> AuditActor { AuditActor(kind: .staff, id: tokenId, role: role) }
    public static func cli(user: String) -> AuditActor { AuditActor(kind: .cli, id: user, role: nil) }
}

/// The fixed vocabulary of audited actions.
public enum AuditAction: String, CaseIterable, Sendable {
    case deviceCodeCreate = "device-code.create"
    case registrationTokenCreate = "registration-token.create"
    case staffTokenCreate = "staff-token.create"
    /// A device code or registration token revoked (or an unknown credential: refused).
    case tokenRevoke = "token.revoke"
    case staffTokenRevoke = "staff-token.revoke"
    case deviceRevoke = "device.revoke"
    case sessionState = "session.state"
    /// `session set --max-shown`: the live frontier raised directly.
    case sessionFrontier = "session.frontier"
    case sessionDownloadRule = "session.download-rule"
    case sessionVenueRule = "session.venue-rule"
    /// A session change refused before it said what it changes (nothing to set, a field that does not parse).
    case sessionSet = "session.set"
    case sessionAdvance = "session.advance"
    case `import` = "import"
    /// `pulse-server restore`: the database replaced by a backup's (recorded in the restored log; target: the file).
    case restore = "restore"
    /// `admin answer-key rotate`: a new answer-signing key scheduled (target: its kid).
    case answerKeyRotate = "answer-key.rotate"
}

/// How an action ended: done, refused (and why: `bad-input`, `not-found`, `conflict`), or failed.
public enum AuditResult: Equatable, Sendable {
    case ok
    case refused(String)
    case error

    public var text: String {
        switch self {
        case .ok: "ok"
        case let .refused(reason): "refused:" + reason
        case .error: "error"
        }
    }

    public init?(text: String) {
        if text == "ok" {
            self = .ok
        } else if text == "error" {
            self = .error
        } else if text.hasPrefix("refused:"), text.count > "refused:".count {
            self = .refused(String(text.dropFirst("refused:".count)))
        } else {
            return nil
        }
    }

    /// The result of an action that threw `error`: refused for the request's fault, else an error.
    public init(_ error: any Error) {
        guard let error = error as? ServerError else { self = .error; return }
        switch error.kind {
        case .badInput: self = .refused("bad-input")
        case .notFound: self = .refused("not-found")
        case .conflict: self = .refused("conflict")
        case .unsafeFile, .storage, .unavailable: self = .error
        }
    }
}
