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
    /// Larger blobs are corrupt without being read (500): no slide comes near, and hashing gigabytes before a
    /// first answer would tie up a verifier for a minute.
    public var maxBlobBytes: Int = 256 << 20
    /// Threads that hash blobs before they are first served (never the server threads).
    public var verifyThreads: Int = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount / 2))
    /// Blobs waiting for (or in) verification at most; first requests for more get 503 with Retry-After.
    public var verifyQueue: Int = 64
    /// Seconds a known blob's file identity, and index.json's, is trusted before it is looked at again (replaced
    /// or removed files are noticed within this time; 0 looks on every request).
    public var recheckSeconds: Double = 1
    /// max-age of the appconfig answers.
    public var appconfigMaxAge: Int = 60

    public init(packageRoot: URL) {
        self.packageRoot = packageRoot
    }
}
