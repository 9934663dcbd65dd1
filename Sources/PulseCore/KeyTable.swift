/// The per-slide keys of one session's deck version: what the key server imports.
///
/// File format (JSON, mode 0600), documented in docs/key-table.md:
/// `{ "packageId", "sessionId", "deckVersion", "packageVersion", "slides": [{ "n", "assetHash", "keyB64", "nonceB64" }] }`.
public struct KeyTable: Codable, Equatable, Sendable {
    public struct Slide: Codable, Equatable, Sendable {
        public var n: Int
        public var assetHash: Digest
        /// The 256-bit AES key, standard base64.
        public var keyB64: String
        /// The 96-bit GCM nonce, standard base64.
        public var nonceB64: String

        public init(n: Int, assetHash: Digest, keyB64: String, nonceB64: String) {
            self.n = n
            self.assetHash = assetHash
            self.keyB64 = keyB64
            self.nonceB64 = nonceB64
        }
    }

    /// The package whose secret the keys come from. Tables written before package ids (pulse-package/1)
    /// have none.
    public var packageId: PackageID?
    public var sessionId: String
    public var deckVersion: Int
    public var packageVersion: String
    public var slides: [Slide]

    public init(packageId: PackageID? = nil, sessionId: String, deckVersion: Int, packageVersion: String, slides: [Slide]) {
        self.packageId = packageId
        self.sessionId = sessionId
        self.deckVersion = deckVersion
        self.packageVersion = packageVersion
        self.slides = slides
    }
}

extension KeyTable {
    /// The file's bytes: canonical JSON (sorted keys), two-space indent, newline at the end.
    public var fileBytes: [UInt8] {
        var fields: [String: JSONValue] = [
            "sessionId": .string(sessionId), "deckVersion": .int(deckVersion), "packageVersion": .string(packageVersion),
            "slides": .array(slides.map { slide in
                [
                    "n": .int(slide.n), "assetHash": JSONValue(slide.assetHash),
                    "keyB64": .string(slide.keyB64), "nonceB64": .string(slide.nonceB64),
                ]
            }),
        ]
        if let packageId { fields["packageId"] = .string(packageId.hex) }
        return JSONValue.object(fields).prettyBytes
    }
}
