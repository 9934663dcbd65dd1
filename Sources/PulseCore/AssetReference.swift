/// A manifest's pointer to a content-addressed blob: `{ assetHash, bytes }` (slides add `n`,
/// public images add `contentType`).
public struct AssetReference: Hashable, Sendable {
    /// The SHA-256 of the blob's bytes: its name.
    public var assetHash: Digest
    /// The blob's length.
    public var bytes: Int

    public init(assetHash: Digest, bytes: Int) {
        self.assetHash = assetHash
        self.bytes = bytes
    }
}

extension JSONValue {
    /// Every `{ assetHash, bytes }` object anywhere in this document, in document order (keys sorted),
    /// without repeats: what a client must fetch to hold the whole package. An `assetHash` that is not a
    /// blob name is left out here (`malformedAssetHashes` lists those, for a verifier to report).
    public var assetReferences: [AssetReference] {
        var seen = Set<AssetReference>()
        var found: [AssetReference] = []
        collectAssets(into: &found, seen: &seen)
        return found
    }

    private func collectAssets(into found: inout [AssetReference], seen: inout Set<AssetReference>) {
        switch self {
        case let .object(fields):
            if let hash = fields["assetHash"]?.digestValue, case let .int(bytes)? = fields["bytes"] {
                let reference = AssetReference(assetHash: hash, bytes: bytes)
                if seen.insert(reference).inserted { found.append(reference) }
            }
            for key in fields.keys.sorted() { fields[key]!.collectAssets(into: &found, seen: &seen) }
        case let .array(items):
            for item in items { item.collectAssets(into: &found, seen: &seen) }
        default:
            break
        }
    }
}

extension JSONValue {
    /// The `assetHash` strings anywhere in this document that are not blob names (64 lowercase hex digits).
    public var malformedAssetHashes: [String] {
        switch self {
        case let .object(fields):
            var found: [String] = []
            if let hash = fields["assetHash"], hash.digestValue == nil { found.append(hash.stringValue ?? String(decoding: hash.canonicalBytes, as: UTF8.self)) }
            for key in fields.keys.sorted() { found += fields[key]!.malformedAssetHashes }
            return found
        case let .array(items):
            return items.flatMap(\.malformedAssetHashes)
        default:
            return []
        }
    }
}
