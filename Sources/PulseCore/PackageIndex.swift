/// `index.json`: the package's commit point. It names the current manifest of every session, series and
/// organization; a build writes everything else first and replaces this one file last, atomically, so
/// a reader (or a build killed half-way) only ever sees a complete previous or complete new package.
public struct PackageIndex: Codable, Equatable, Sendable {
    public static let currentFormat = "pulse-package/1"

    public struct Session: Codable, Equatable, Sendable {
        /// The current manifest is `sessions/<id>/<packageVersion>.json`.
        public var packageVersion: String
        public var deckVersion: Int
        /// SHA-256 over the slide list (`n:assetHash` lines): deckVersion moves when this changes.
        public var deckDigest: String
        /// The highest deckVersion this session ever had: deckVersion never goes back.
        public var highestDeckVersion: Int

        public init(packageVersion: String, deckVersion: Int, deckDigest: String, highestDeckVersion: Int) {
            self.packageVersion = packageVersion
            self.deckVersion = deckVersion
            self.deckDigest = deckDigest
            self.highestDeckVersion = highestDeckVersion
        }
    }

    public struct Document: Codable, Equatable, Sendable {
        /// The current manifest is `<kind>/<id>/<packageVersion>.json`.
        public var packageVersion: String
        public init(packageVersion: String) { self.packageVersion = packageVersion }
    }

    public var format: String
    public var sessions: [String: Session]
    public var series: [String: Document]
    /// White-label app configs by organization slug (`GET /api/sync/appconfig?org=`).
    public var appconfig: [String: Document]

    public init(sessions: [String: Session] = [:], series: [String: Document] = [:], appconfig: [String: Document] = [:]) {
        self.format = Self.currentFormat
        self.sessions = sessions
        self.series = series
        self.appconfig = appconfig
    }
}
