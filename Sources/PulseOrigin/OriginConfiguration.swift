import Foundation

/// What pulse-origin serves and how. Defaults are documented in docs/origin.md.
public struct OriginConfiguration: Sendable {
    /// The package folder (`pulse-pack build` output).
    public var packageRoot: URL
    /// Access-Control-Allow-Origin on every answer; nil sends no CORS headers.
    public var allowOrigin: String? = "*"
    /// Bytes of verified blobs kept in memory at most (least recently used leave first). 0 disables.
    public var memoryBudget: Int = 256 << 20
    /// Blobs larger than this are always sent from disk (sendfile), never kept in memory.
    public var memoryMaxBlob: Int = 8 << 20
    /// Seconds a known blob's file identity is trusted before it is looked at again (replaced or removed files
    /// are noticed within this time).
    public var recheckSeconds: Double = 1
    /// max-age of the appconfig answers.
    public var appconfigMaxAge: Int = 60

    public init(packageRoot: URL) {
        self.packageRoot = packageRoot
    }
}
