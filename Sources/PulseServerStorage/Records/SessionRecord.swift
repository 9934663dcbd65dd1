import PulseCore

/// A session's live settings and its current content version: everything the release decision needs
/// besides the key table and the request.
public struct SessionRecord: Equatable, Sendable {
    public var id: String
    public var state: SessionState
    /// The live frontier: the highest slide shown while live (0-based); nil before the first advance.
    /// Only ever grows (advances and `--max-shown` apply `max()`).
    public var maxShown: Int?
    /// The rehearsal frontier: advances made in rehearsal. Releases nothing, never feeds `maxShown`.
    public var rehearsalMaxShown: Int?
    /// Ended sessions release the whole deck when true.
    public var allowDownload: Bool
    /// Non-empty: the session is venue-locked; keys are released only to requests from these networks.
    public var venueNetworks: [IPNetwork]
    /// The package the session was imported from (parsed where it leaves the database: an unreadable one is
    /// a storage error there).
    public var packageId: PackageID
    public var seriesId: String?
    /// The current session manifest as imported (before gated resources are substituted).
    public var packageVersion: String
    public var deckVersion: Int
    public var slideCount: Int
    /// Bumped by every change of this session (state, frontier, settings, content): SSE event ids.
    public var changeSequence: Int64
    public var updatedAt: Int64

    public init(
        id: String, state: SessionState, maxShown: Int?, rehearsalMaxShown: Int?, allowDownload: Bool,
        venueNetworks: [IPNetwork], packageId: PackageID, seriesId: String?, packageVersion: String, deckVersion: Int,
        slideCount: Int, changeSequence: Int64, updatedAt: Int64
    ) {
        self.id = id
        self.state = state
        self.maxShown = maxShown
        self.rehearsalMaxShown = rehearsalMaxShown
        self.allowDownload = allowDownload
        self.venueNetworks = venueNetworks
        self.packageId = packageId
        self.seriesId = seriesId
        self.packageVersion = packageVersion
        self.deckVersion = deckVersion
        self.slideCount = slideCount
        self.changeSequence = changeSequence
        self.updatedAt = updatedAt
    }

    /// Whether a request from `client` passes the venue rule (nil: the address is unknown).
    public func venueCheck(client: IPAddress?) -> VenueCheck {
        guard !venueNetworks.isEmpty else { return .unlocked }
        guard let client else { return .outside }
        return venueNetworks.contains { $0.contains(client) } ? .inside : .outside
    }
}

/// A change to a session's settings; nil fields stay as they are.
public struct SessionUpdate: Sendable, Equatable {
    public var state: SessionState?
    /// Moves the live frontier with `max()`: it never goes back.
    public var maxShown: Int?
    public var allowDownload: Bool?
    /// Replaces the venue networks; an empty list unlocks the session.
    public var venueNetworks: [IPNetwork]?

    public init(state: SessionState? = nil, maxShown: Int? = nil, allowDownload: Bool? = nil, venueNetworks: [IPNetwork]? = nil) {
        self.state = state
        self.maxShown = maxShown
        self.allowDownload = allowDownload
        self.venueNetworks = venueNetworks
    }

    public var isEmpty: Bool { self == SessionUpdate() }
}

/// What an advance did.
public enum AdvanceOutcome: Equatable, Sendable {
    /// The frontier (live or rehearsal, as the state says) is now the record's; `moved` is false when
    /// the advance was at or behind it.
    case advanced(SessionRecord, moved: Bool)
    /// The session is in a state without a frontier (draft, scheduled, ended).
    case refused(SessionState)
    case noSuchSession
}

/// One entry of a session's change log: the SSE `advance`, `state` and `manifest` events come from it,
/// and `Last-Event-ID` resumes from a sequence number.
public struct SessionChange: Equatable, Sendable {
    public enum Event: Equatable, Sendable {
        /// The live frontier moved.
        case advance(maxShown: Int, deckVersion: Int)
        /// The rehearsal frontier moved (releases nothing).
        case rehearsalAdvance(maxShown: Int, deckVersion: Int)
        case state(SessionState)
        /// allowDownload or the venue networks changed: what a device may fetch may have changed.
        case settings
        /// A new manifest (and maybe a new deckVersion) was imported.
        case content(packageVersion: String, deckVersion: Int)
    }

    public var sessionId: String
    /// Per-session, strictly increasing from 1.
    public var sequence: Int64
    public var at: Int64
    public var event: Event

    public init(sessionId: String, sequence: Int64, at: Int64, event: Event) {
        self.sessionId = sessionId
        self.sequence = sequence
        self.at = at
        self.event = event
    }
}

extension SessionChange.Event {
    /// How every storage's change log holds an event: its kind and the columns that kind uses (nil: NULL).
    struct Columns: Equatable {
        var kind: String
        var maxShown: Int? = nil
        var deckVersion: Int? = nil
        var state: String? = nil
        var packageVersion: String? = nil
    }

    var columns: Columns {
        switch self {
        case let .advance(shown, deck): Columns(kind: "advance", maxShown: shown, deckVersion: deck)
        case let .rehearsalAdvance(shown, deck): Columns(kind: "rehearsal-advance", maxShown: shown, deckVersion: deck)
        case let .state(value): Columns(kind: "state", state: value.rawValue)
        case .settings: Columns(kind: "settings")
        case let .content(version, deck): Columns(kind: "content", deckVersion: deck, packageVersion: version)
        }
    }

    /// The event a stored row holds; nil for a kind this version does not know (skipped).
    /// - Throws: `ServerError(.storage)` when a column its kind needs is NULL.
    init?(_ row: Columns) throws(ServerError) {
        func needed<T>(_ value: T?, _ column: String) throws(ServerError) -> T {
            guard let value else { throw ServerError(.storage, "a '\(row.kind)' change without \(column)") }
            return value
        }
        switch row.kind {
        case "advance": self = .advance(maxShown: try needed(row.maxShown, "max_shown"), deckVersion: try needed(row.deckVersion, "deck_version"))
        case "rehearsal-advance":
            self = .rehearsalAdvance(maxShown: try needed(row.maxShown, "max_shown"), deckVersion: try needed(row.deckVersion, "deck_version"))
        case "state": self = .state(SessionState(rawValue: try needed(row.state, "state")) ?? .draft)
        case "settings": self = .settings
        case "content": self = .content(packageVersion: try needed(row.packageVersion, "package_version"), deckVersion: try needed(row.deckVersion, "deck_version"))
        default: return nil
        }
    }
}
