import Foundation

/// `server/index.json`: the build's commit point (docs/package-format.md). It names the current manifest
/// of every session, series and organization, the deck state, and every version still in the package
/// with its blob list and publish time; a build writes everything else first and replaces this one file
/// last, atomically, so a reader (or a build killed half-way) only ever sees a complete previous or
/// complete new package.
public struct PackageIndex: Codable, Equatable, Sendable {
    public static let currentFormat = "pulse-package/2"
    /// The layout before the package was split by audience: one folder, manifests next to blobs.
    public static let legacyFormat = "pulse-package/1"

    public struct Session: Codable, Equatable, Sendable {
        /// The current manifest is `server/sessions/<id>/<packageVersion>.json`.
        public var packageVersion: String
        public var deckVersion: Int
        /// SHA-256 over the slide list (`n:assetHash` lines): deckVersion moves when this changes.
        public var deckDigest: String
        /// The highest deckVersion this session ever had: deckVersion never goes back.
        public var highestDeckVersion: Int
        /// The current version's gated resources: `server/gated/<id>/<gated>.json`, named by the SHA-256
        /// of its bytes; nil when the session has none.
        public var gated: String?

        public init(packageVersion: String, deckVersion: Int, deckDigest: String, highestDeckVersion: Int, gated: String? = nil) {
            self.packageVersion = packageVersion
            self.deckVersion = deckVersion
            self.deckDigest = deckDigest
            self.highestDeckVersion = highestDeckVersion
            self.gated = gated
        }
    }

    public struct Document: Codable, Equatable, Sendable {
        /// The current manifest is `<kind>/<id>/<packageVersion>.json` (series in server/, app configs in public/).
        public var packageVersion: String
        public init(packageVersion: String) { self.packageVersion = packageVersion }
    }

    /// One published version of a document.
    public struct Version: Codable, Equatable, Sendable {
        public var packageVersion: String
        /// `public/refs/<refs>.json`: the blobs this version names.
        public var refs: String
        /// When a build first published it (or published it again after another version), UTC seconds.
        public var publishedAt: String
        /// Sessions: the gated resources file that goes with this version, if any.
        public var gated: String?

        public init(packageVersion: String, refs: String, publishedAt: String, gated: String? = nil) {
            self.packageVersion = packageVersion
            self.refs = refs
            self.publishedAt = publishedAt
            self.gated = gated
        }
    }

    public var format: String
    /// 32 lowercase hex digits (`PackageID`), bound into every slide key.
    public var packageId: PackageID
    public var sessions: [String: Session]
    public var series: [String: Document]
    /// White-label app configs by organization slug (`GET /api/sync/appconfig?org=`).
    public var appconfig: [String: Document]
    /// `<kind>/<id>` → every version still in the package, newest first; the first is the current one.
    public var history: [String: [Version]]

    public init(
        packageId: PackageID, sessions: [String: Session] = [:], series: [String: Document] = [:],
        appconfig: [String: Document] = [:], history: [String: [Version]] = [:]
    ) {
        self.format = Self.currentFormat
        self.packageId = packageId
        self.sessions = sessions
        self.series = series
        self.appconfig = appconfig
        self.history = history
    }

    /// The history key of a document: `sessions/keynote`.
    public static func historyKey(_ kind: DocumentKind, _ id: String) -> String { "\(kind.rawValue)/\(id)" }

    /// The versions of one document, newest first.
    public func versions(_ kind: DocumentKind, _ id: String) -> [Version] { history[Self.historyKey(kind, id)] ?? [] }

    /// Records that `version` is now the current one of a document: it goes to the front of its history
    /// (taken out of the list first if it was published before: a revert is a new publication). A version
    /// that is already current keeps its publish time (only its gated resources may have changed).
    public mutating func publish(_ kind: DocumentKind, _ id: String, _ version: Version) {
        let key = Self.historyKey(kind, id)
        var list = history[key] ?? []
        var version = version
        if let current = list.first, current.packageVersion == version.packageVersion {
            version.publishedAt = current.publishedAt
            list.removeFirst()
        } else {
            list.removeAll { $0.packageVersion == version.packageVersion }
        }
        history[key] = [version] + list
    }

    /// The file's bytes: canonical JSON (sorted keys, two-space indent, final newline).
    public var fileBytes: [UInt8] { json.prettyBytes }

    var json: JSONValue {
        .object([
            "format": .string(format), "packageId": .string(packageId.hex),
            "sessions": .object(sessions.mapValues { session in
                JSONValue.object([
                    "packageVersion": .string(session.packageVersion), "deckVersion": .int(session.deckVersion),
                    "deckDigest": .string(session.deckDigest), "highestDeckVersion": .int(session.highestDeckVersion),
                ].merging(session.gated.map { ["gated": .string($0)] } ?? [:]) { $1 })
            }),
            "series": .object(series.mapValues { ["packageVersion": .string($0.packageVersion)] }),
            "appconfig": .object(appconfig.mapValues { ["packageVersion": .string($0.packageVersion)] }),
            "history": .object(history.mapValues { versions in
                .array(versions.map { version in
                    JSONValue.object([
                        "packageVersion": .string(version.packageVersion), "refs": .string(version.refs),
                        "publishedAt": .string(version.publishedAt),
                    ].merging(version.gated.map { ["gated": .string($0)] } ?? [:]) { $1 })
                })
            }),
        ])
    }

    /// `public/index.json`: the same history without anything device-scoped (no session or series
    /// packageVersion, no deck state, no gated resources).
    public var publicIndex: PublicIndex {
        PublicIndex(
            packageId: packageId, appconfig: appconfig,
            history: Dictionary(uniqueKeysWithValues: history.map { key, versions in (key, versions.map { Self.publicVersion(key: key, $0) }) }))
    }

    /// A version of document `key` as the public index shows it: its blob list and time, and for an app
    /// config its public file.
    public static func publicVersion(key: String, _ version: Version) -> PublicIndex.Version {
        PublicIndex.Version(
            refs: version.refs, publishedAt: version.publishedAt,
            files: key.hasPrefix(DocumentKind.appconfig.rawValue + "/") ? ["\(key)/\(version.packageVersion).json"] : nil)
    }
}

/// The kinds of published document, each in its own folder (sessions and series in `server/`, app
/// configs in `public/`).
public enum DocumentKind: String, CaseIterable, Sendable {
    case sessions, series, appconfig

    /// App configs are public by contract; session and series manifests are device-scoped.
    public var isPublic: Bool { self == .appconfig }
}
