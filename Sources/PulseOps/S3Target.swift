import Foundation
import PulseCrypto

/// A push target in S3-compatible storage: `s3://bucket/prefix`.
public struct S3Target: PushTarget {
    public let client: S3Client
    /// Key prefix without a trailing slash ("" for the bucket root).
    public let prefix: String
    /// Seconds a lease lapses after its last renewal (tests shorten it).
    var leaseTTL = 120
    /// Objects per listing request (S3's maximum; tests make pages small).
    var pageSize = 1000

    /// The lease object, next to index.json.
    static let leaseName = ".pulse-lease"

    public init(client: S3Client, prefix: String) {
        self.client = client
        var prefix = prefix
        while prefix.hasSuffix("/") { prefix.removeLast() }
        while prefix.hasPrefix("/") { prefix.removeFirst() }
        self.prefix = prefix
    }

    public var displayName: String { "s3://\(client.bucket)" + (prefix.isEmpty ? "" : "/\(prefix)") }

    func key(_ path: String) -> String { prefix.isEmpty ? path : "\(prefix)/\(path)" }

    /// Nothing to prepare: the first request (index.json) finds a missing bucket or wrong credentials.
    public func prepare() throws {}

    public func size(of path: String) throws -> Int? { try client.head(key(path)) }

    public func read(_ path: String) throws -> Data? { try client.get(key(path)) }

    public func write(_ path: String, data: Data, kind: PublishedKind) throws {
        // A blob's name is its SHA-256, checked against its bytes before it gets here (LocalPackage).
        let digest = kind.isBlob && path.hasPrefix("assets/") ? Hex.decode(path.dropFirst("assets/".count)) : nil
        try client.put(key(path), body: data, contentType: kind.contentType, cacheControl: kind.cacheControl,
                       sha256: digest?.count == 32 ? digest : nil)
    }

    public func list(under path: String) throws -> [TargetObject] {
        let base = prefix.isEmpty ? "" : prefix + "/"
        return try client.list(prefix: base + path, maxKeys: pageSize).compactMap { object in
            guard object.path.hasPrefix(base) else { return nil }
            var object = object
            object.path = String(object.path.dropFirst(base.count))
            return object
        }
    }

    public func delete(_ path: String) throws { try client.delete(key(path)) }

    public func acquireLease(for operation: String, wait: TimeInterval) throws -> any TargetLease {
        try S3Lease.acquire(client: client, key: key(Self.leaseName), operation: operation, ttl: leaseTTL, wait: wait)
    }
}
