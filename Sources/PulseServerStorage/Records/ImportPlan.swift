import PulseCore

/// Everything one `pulse-server import` writes, read and checked completely before any write.
public struct ImportPlan: Sendable {
    public var packageId: PackageID
    public var sessions: [SessionImport]
    public var series: [SeriesImport]

    public init(packageId: PackageID, sessions: [SessionImport], series: [SeriesImport]) {
        self.packageId = packageId
        self.sessions = sessions
        self.series = series
    }
}

/// One session's current content.
public struct SessionImport: Sendable {
    public var id: String
    public var seriesId: String?
    public var packageVersion: String
    public var deckVersion: Int
    public var slideCount: Int
    /// The manifest file's bytes (canonical JSON), served as they are when nothing is gated.
    public var manifest: [UInt8]
    public var gated: [GatedResource]
    public var keyTable: KeyTableRecord

    public init(
        id: String, seriesId: String?, packageVersion: String, deckVersion: Int, slideCount: Int, manifest: [UInt8],
        gated: [GatedResource], keyTable: KeyTableRecord
    ) {
        self.id = id
        self.seriesId = seriesId
        self.packageVersion = packageVersion
        self.deckVersion = deckVersion
        self.slideCount = slideCount
        self.manifest = manifest
        self.gated = gated
        self.keyTable = keyTable
    }
}

/// One series' current manifest and the sessions it lists (a series-scoped device's reach).
public struct SeriesImport: Sendable {
    public var id: String
    public var packageVersion: String
    public var manifest: [UInt8]
    public var sessionIds: [String]

    public init(id: String, packageVersion: String, manifest: [UInt8], sessionIds: [String]) {
        self.id = id
        self.packageVersion = packageVersion
        self.manifest = manifest
        self.sessionIds = sessionIds
    }
}

/// Choices the operator makes for an import.
public struct ImportOptions: Sendable {
    /// Accept sessions that were imported from another package id: their old key tables are dropped
    /// (devices holding the old deck must re-sync), their frontier and state stay.
    public var replacePackage = false

    public init(replacePackage: Bool = false) { self.replacePackage = replacePackage }
}

/// What an import changed.
public struct ImportSummary: Equatable, Sendable {
    public enum SessionOutcome: Equatable, Sendable {
        case new(deckVersion: Int)
        /// A newer deck became current.
        case deck(from: Int, to: Int)
        /// Same deck, a new manifest (agenda, speakers, gated resources, …).
        case manifest
        case unchanged
    }

    public enum SeriesOutcome: Equatable, Sendable {
        case new
        case updated
        case unchanged
    }

    public var packageId: PackageID
    public var sessions: [(id: String, outcome: SessionOutcome)]
    public var series: [(id: String, outcome: SeriesOutcome)]

    public init(packageId: PackageID, sessions: [(id: String, outcome: SessionOutcome)], series: [(id: String, outcome: SeriesOutcome)]) {
        self.packageId = packageId
        self.sessions = sessions
        self.series = series
    }

    /// True when nothing was written.
    public var isNoOp: Bool {
        sessions.allSatisfy { $0.outcome == .unchanged } && series.allSatisfy { $0.outcome == .unchanged }
    }

    public static func == (a: ImportSummary, b: ImportSummary) -> Bool {
        a.packageId == b.packageId && a.sessions.map(\.id) == b.sessions.map(\.id) && a.sessions.map(\.outcome) == b.sessions.map(\.outcome)
            && a.series.map(\.id) == b.series.map(\.id) && a.series.map(\.outcome) == b.series.map(\.outcome)
    }
}

/// A session's current content as served: the imported manifest and its gated resources.
public struct SessionContent: Equatable, Sendable {
    public var sessionId: String
    public var packageVersion: String
    public var manifest: [UInt8]
    public var gated: [GatedResource]

    public init(sessionId: String, packageVersion: String, manifest: [UInt8], gated: [GatedResource]) {
        self.sessionId = sessionId
        self.packageVersion = packageVersion
        self.manifest = manifest
        self.gated = gated
    }
}

/// A series' current manifest and the sessions it lists.
public struct SeriesRecord: Equatable, Sendable {
    public var id: String
    public var packageId: PackageID
    public var packageVersion: String
    public var manifest: [UInt8]
    public var sessionIds: [String]
    /// Grows by one with every import that changes the series (never lower later): with its sessions'
    /// change sequences, the `seq` of a signed series manifest.
    public var generation: Int64

    public init(id: String, packageId: PackageID, packageVersion: String, manifest: [UInt8], sessionIds: [String], generation: Int64 = 0) {
        self.generation = generation
        self.id = id
        self.packageId = packageId
        self.packageVersion = packageVersion
        self.manifest = manifest
        self.sessionIds = sessionIds
    }
}
