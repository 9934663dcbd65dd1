import PulseCore
import PulseMetrics

/// The `reason` of `pulse_sync_refusals_total`: why a request was answered "no", from the access log's note
/// (and, for the console's 403, the method).
public enum RefusalReason: Int, MetricLabel {
    public static let labelName = "reason"
    case badHeader, stale, unknownDevice, revoked, badSignature, rateLimited, outOfScope, replay, badToken
    case badRequest, method, streamsFull, queueFull, unavailable, noRoute, staffUnauthorized
    case forbidden, csrf, notFound, conflict, other

    static let values = [
        "bad-header", "stale", "unknown-device", "revoked", "bad-signature", "rate-limited", "out-of-scope", "replay", "bad-token",
        "bad-request", "method", "streams-full", "queue-full", "unavailable", "no-route", "staff-unauthorized",
        "forbidden", "csrf", "not-found", "conflict", "other",
    ]
    public var labelValue: String { Self.values[rawValue] }
    @inlinable public var labelIndex: Int { rawValue }

    /// The reason a refused answer's note names (`no:bad-signature`, `stale`, `staff:forbidden`, `console:403`, …);
    /// `other` for a note not listed (an internal error). The console notes its answers by status only
    /// (`console:403`): a 403 to a `POST` is a change refused for want of a live console session, its CSRF token
    /// or the console's own origin (`csrf`; a console form the staff API refuses by role is one too, but the
    /// console offers a principal no such form), to a `GET` a page the principal's role may not open (`forbidden`).
    init(note: String, method: String = "GET") {
        switch note {
        case "no:header": self = .badHeader
        case "stale": self = .stale
        case "no:unknown-device": self = .unknownDevice
        case "no:revoked": self = .revoked
        case "no:bad-signature": self = .badSignature
        case "rate-limited", "enroll:rate-limited", "enroll:token-rate-limited": self = .rateLimited
        case "no:session", "no:series": self = .outOfScope
        case "no:replay", "no:signature": self = .replay
        case "no:token": self = .badToken
        case "enroll:bad-request", "enroll:bad-key", "diag:bad-request", "bad-request": self = .badRequest
        case "no:method", "method": self = .method
        case "events:token-streams-full": self = .streamsFull
        case "queue-full": self = .queueFull
        case "db-unavailable": self = .unavailable
        case "no:route", "staff:no-route", "no:no-origin": self = .noRoute
        case "staff:unauthorized", "console:401": self = .staffUnauthorized
        // The staff API's own refusals (`SyncAnswers.error`, `StaffPermissions`) and the console's.
        case "staff:forbidden": self = .forbidden
        case "console:403": self = method == "POST" ? .csrf : .forbidden
        case "staff:badRequest", "console:400": self = .badRequest
        case "staff:notFound", "console:404", "console:no-session": self = .notFound
        case "staff:conflict", "console:409": self = .conflict
        case "console:405": self = .method
        case "console:429": self = .rateLimited
        case "staff:unavailable", "console:503": self = .unavailable
        default: self = .other
        }
    }
}

/// The `result` of `pulse_enrollments_total`.
public enum EnrollmentResult: Int, MetricLabel {
    public static let labelName = "result"
    case enrolled, again, badToken, badRequest, rateLimited, busy, error, other

    static let values = ["enrolled", "again", "bad-token", "bad-request", "rate-limited", "busy", "error", "other"]
    public var labelValue: String { Self.values[rawValue] }
    @inlinable public var labelIndex: Int { rawValue }

    /// `again`: the same key asked once more (a retry after a lost answer) and got the device it made.
    init(note: String) {
        switch note {
        case "enrolled": self = .enrolled
        case "enrolled:again": self = .again
        case "no:token": self = .badToken
        case "enroll:bad-request", "enroll:bad-key": self = .badRequest
        case "enroll:rate-limited", "enroll:token-rate-limited": self = .rateLimited
        case "queue-full": self = .busy
        case "error", "db-unavailable": self = .error
        default: self = .other
        }
    }
}

/// The `kind` of `pulse_storage_errors_total`.
enum StorageErrorKind: Int, MetricLabel {
    static let labelName = "kind"
    case unavailable, error
    var labelValue: String { ["unavailable", "error"][rawValue] }
    var labelIndex: Int { rawValue }
}

/// The `connection` of `pulse_storage_reconnects_total`.
enum StorageConnection: Int, MetricLabel {
    static let labelName = "connection"
    case pool, listener
    var labelValue: String { ["pool", "listener"][rawValue] }
    var labelIndex: Int { rawValue }
}

extension String {
    /// N of a keys answer's note `keys:N`, or nil.
    var releasedCount: Int? {
        let utf8 = self.utf8
        guard utf8.starts(with: "keys:".utf8) else { return nil }
        return BoundedDecimal.parse(utf8.dropFirst(5), maxDigits: 10)
    }
}
