/// A manifest's pointer to a content-addressed blob: `{ assetHash, bytes }` (slides add `n`,
/// public images add `contentType`).
public struct AssetReference: Hashable, Sendable {
    /// Lowercase hex SHA-256 of the blob's bytes: its name.
    public var assetHash: String
    /// The blob's length.
    public var bytes: Int

    public init(assetHash: String, bytes: Int) {
        self.assetHash = assetHash
        self.bytes = bytes
    }
}

extension JSONValue {
    /// Every `{ assetHash, bytes }` object anywhere in this document, in document order (keys sorted),
    /// without repeats: what a client must fetch to hold the whole package.
    public var assetReferences: [AssetReference] {
        var seen = Set<AssetReference>()
        var found: [AssetReference] = []
        collectAssets(into: &found, seen: &seen)
        return found
    }

    private func collectAssets(into found: inout [AssetReference], seen: inout Set<AssetReference>) {
        switch self {
        case let .object(fields):
            if case let .string(hash)? = fields["assetHash"], case let .int(bytes)? = fields["bytes"] {
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
