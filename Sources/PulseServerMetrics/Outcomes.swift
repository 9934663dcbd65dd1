import PulseCore
import PulseMetrics

/// The `reason` of `pulse_sync_refusals_total`: why a request was answered "no", from the access log's note.
public enum RefusalReason: Int, MetricLabel {
    public static let labelName = "reason"
    case badHeader, stale, unknownDevice, revoked, badSignature, rateLimited, outOfScope, replay, badToken
    case badRequest, method, streamsFull, queueFull, unavailable, noRoute, staffUnauthorized, other

    static let values = [
        "bad-header", "stale", "unknown-device", "revoked", "bad-signature", "rate-limited", "out-of-scope", "replay", "bad-token",
        "bad-request", "method", "streams-full", "queue-full", "unavailable", "no-route", "staff-unauthorized", "other",
    ]
    public var labelValue: String { Self.values[rawValue] }
    @inlinable public var labelIndex: Int { rawValue }

    /// The reason a refused answer's note names (`no:bad-signature`, `stale`, …); `other` for a note not listed
    /// (a staff route's 400/404/409, an internal error).
    init(note: String) {
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
        case "staff:unauthorized": self = .staffUnauthorized
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
