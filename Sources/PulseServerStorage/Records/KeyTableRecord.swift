import PulseCore
import PulseCrypto

/// One slide's key as stored and released: `{ n, keyB64, nonceB64 }` (+ the blob it opens).
public struct SlideKey: Equatable, Sendable, CustomStringConvertible, CustomReflectable {
    public var n: Int
    public var assetHash: Digest
    public var keyB64: String
    public var nonceB64: String

    public init(n: Int, assetHash: Digest, keyB64: String, nonceB64: String) {
        self.n = n
        self.assetHash = assetHash
        self.keyB64 = keyB64
        self.nonceB64 = nonceB64
    }

    /// Never prints the key: a slide key in a log line would be a leak.
    public var description: String { "SlideKey(n: \(n), assetHash: \(assetHash))" }
    public var customMirror: Mirror { Mirror(self, children: ["n": n, "assetHash": assetHash]) }
}

/// A session's key table for one deck version, as stored.
public struct KeyTableRecord: Equatable, Sendable, CustomStringConvertible, CustomReflectable {
    public var sessionId: String
    public var deckVersion: Int
    public var packageId: PackageID
    public var slides: [SlideKey]

    public init(sessionId: String, deckVersion: Int, packageId: PackageID, slides: [SlideKey]) {
        self.sessionId = sessionId
        self.deckVersion = deckVersion
        self.packageId = packageId
        self.slides = slides
    }

    /// SHA-256 over the slides' canonical JSON: two tables hold the same keys exactly when their digests match.
    public var digest: [UInt8] { SHA256.hash(Self.encode(slides)) }

    public var description: String { "KeyTableRecord(\(sessionId) deckVersion \(deckVersion), \(slides.count) slides)" }
    public var customMirror: Mirror { Mirror(self, children: ["sessionId": sessionId, "deckVersion": deckVersion, "slides": slides]) }

    /// Stored form: canonical JSON `[{ "n", "assetHash", "keyB64", "nonceB64" }]`.
    static func encode(_ slides: [SlideKey]) -> [UInt8] {
        JSONValue.array(slides.map {
            ["n": .int($0.n), "assetHash": JSONValue($0.assetHash), "keyB64": .string($0.keyB64), "nonceB64": .string($0.nonceB64)]
        }).canonicalBytes
    }

    static func decode(_ bytes: [UInt8]) throws -> [SlideKey] {
        guard case let .array(items) = try JSONValue.parse(bytes) else { throw ServerError(.storage, "a stored key table is not a list") }
        return try items.map { item in
            guard let n = item["n"]?.intValue, let hash = item["assetHash"]?.digestValue, let key = item["keyB64"]?.stringValue,
                  let nonce = item["nonceB64"]?.stringValue
            else { throw ServerError(.storage, "a stored key table has a malformed slide") }
            return SlideKey(n: n, assetHash: hash, keyB64: key, nonceB64: nonce)
        }
    }
}
