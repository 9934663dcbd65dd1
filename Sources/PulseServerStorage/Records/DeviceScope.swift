/// What an enrolled device may read: set by the device code or registration token it enrolled with.
///
/// A series-scoped device may read the series manifest and every session the series manifest lists;
/// a session-scoped device only that one session, and no series manifest.
public enum DeviceScope: Equatable, Hashable, Sendable, CustomStringConvertible {
    case session(String)
    case series(String)

    /// `session` or `series`: the kind column in storage and the `scope.kind` of a device certificate.
    public var kind: String {
        switch self {
        case .session: "session"
        case .series: "series"
        }
    }

    /// The session or series id.
    public var id: String {
        switch self {
        case let .session(id), let .series(id): id
        }
    }

    /// The scope from its stored kind and id; nil for an unknown kind.
    public init?(kind: String, id: String) {
        switch kind {
        case "session": self = .session(id)
        case "series": self = .series(id)
        default: return nil
        }
    }

    /// True when this scope covers `session`; `seriesSessions` are the sessions the scope's series
    /// manifest lists (ignored for a session scope).
    public func allows(session: String, seriesSessions: some Sequence<String>) -> Bool {
        switch self {
        case let .session(id): id == session
        case .series: seriesSessions.contains(session)
        }
    }

    /// True when this scope covers the manifest of `series`.
    public func allows(series: String) -> Bool { self == .series(series) }

    public var description: String { "\(kind) \(id)" }
}
