import Foundation
import PulseCrypto

/// `refs/<sha256>.json`: the blobs one published version names, and nothing else (no order, no slide
/// numbers): what push uploads and what gc on a target keeps. Two versions naming the same blobs share
/// one file, named by the SHA-256 of its bytes.
///
///     { "assets": [ { "assetHash": "<64 hex>", "bytes": 204816 }, { …, "contentType": "image/png" } ] }
public struct BlobList: Equatable, Sendable {
    public struct Entry: Equatable, Sendable {
        public var assetHash: Digest
        public var bytes: Int
        /// Public images carry the media type their manifest gives them.
        public var contentType: String?

        public init(assetHash: Digest, bytes: Int, contentType: String? = nil) {
            self.assetHash = assetHash
            self.bytes = bytes
            self.contentType = contentType
        }
    }

    /// Sorted by assetHash, each hash once.
    public let entries: [Entry]
    /// The file's bytes: canonical JSON (sorted keys, two-space indent, final newline).
    public let fileBytes: [UInt8]
    /// The file's name without `.json`: the SHA-256 of its bytes.
    public let name: String

    public init(_ entries: [Entry]) {
        var byHash: [Digest: Entry] = [:]
        for entry in entries {
            if let known = byHash[entry.assetHash], known.contentType != nil, entry.contentType == nil { continue }
            byHash[entry.assetHash] = entry
        }
        self.entries = byHash.values.sorted { $0.assetHash < $1.assetHash }
        // Encoded once: a build asks for the bytes and the name of every version's list.
        fileBytes = Self.encode(self.entries)
        name = SHA256.hex(fileBytes)
    }

    /// Every `{ assetHash, bytes, contentType? }` in a manifest.
    public init(manifest: JSONValue) {
        var found: [Entry] = []
        Self.collect(manifest, into: &found)
        self.init(found)
    }

    private static func collect(_ value: JSONValue, into found: inout [Entry]) {
        switch value {
        case let .object(fields):
            if let hash = fields["assetHash"]?.digestValue, case let .int(bytes)? = fields["bytes"] {
                found.append(Entry(assetHash: hash, bytes: bytes, contentType: fields["contentType"]?.stringValue))
            }
            for field in fields.values { collect(field, into: &found) }
        case let .array(items):
            for item in items { collect(item, into: &found) }
        default:
            break
        }
    }

    /// Reads a refs file. - Throws: `InputError` (naming `file`) if it is not one.
    public init(parsing bytes: some Collection<UInt8>, file: String) throws {
        let value = try JSONValue.parse(Array(bytes), file: file)
        guard let items = value["assets"]?.arrayValue else { throw InputError(file: file, "not a blob list (no \"assets\" array)") }
        self.init(try items.enumerated().map { index, item in
            guard let hash = item["assetHash"]?.digestValue, let bytes = item["bytes"]?.intValue, bytes >= 0 else {
                throw InputError(file: file, path: "assets[\(index)]", "not a blob reference {assetHash, bytes}")
            }
            return Entry(assetHash: hash, bytes: bytes, contentType: item["contentType"]?.stringValue)
        })
    }

    private static func encode(_ entries: [Entry]) -> [UInt8] {
        JSONValue.object([
            "assets": .array(entries.map { entry in
                var fields: [String: JSONValue] = ["assetHash": JSONValue(entry.assetHash), "bytes": .int(entry.bytes)]
                if let type = entry.contentType { fields["contentType"] = .string(type) }
                return .object(fields)
            }),
        ]).prettyBytes
    }
}
