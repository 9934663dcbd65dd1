import PulseCore

/// What a sync did and what it cost: the delta against the full deck.
public struct SyncReport: Sendable {
    public enum Outcome: String, Sendable {
        /// First time this manifest is cached.
        case new
        /// The manifest changed (the server answered 200 to the conditional GET).
        case updated
        /// Nothing changed (304, or a series ref naming the cached version).
        case unchanged
        /// The answer broke a rule of signed answers (`refusal` says which): nothing of it was kept, the
        /// cached version (if any) stays in use.
        case refused
    }

    /// One manifest the sync looked at.
    public struct Item: Sendable {
        public var kind: String
        public var id: String
        public var outcome: Outcome
        public var packageVersion: String?
        public var deckVersion: Int?
        /// Assets the manifest names, and their bytes: the full download.
        public var assets = 0
        public var assetBytes = 0
        public var blobsFetched = 0
        /// Blob body bytes received.
        public var blobBytesFetched = 0
        public var blobsReused = 0
        /// Bytes of interrupted downloads that were resumed instead of fetched again.
        public var resumedBytes = 0
        /// Why the answer was refused (outcome `refused`): one line naming the rule.
        public var refusal: String?
    }

    public var items: [Item] = []
    /// Every request of the sync (manifests, blobs, clock reads, retries), and every body byte received.
    public var requests = 0
    public var bytes = 0
    public var garbage = DeviceCache.Garbage()
    public var seconds = 0.0

    public var blobsFetched: Int { items.reduce(0) { $0 + $1.blobsFetched } }
    public var blobBytesFetched: Int { items.reduce(0) { $0 + $1.blobBytesFetched } }
    public var blobsReused: Int { items.reduce(0) { $0 + $1.blobsReused } }
    /// What a device without any cache would download for these manifests: every asset once.
    public var fullBytes: Int { items.reduce(0) { $0 + $1.assetBytes } }
    public var assets: Int { items.reduce(0) { $0 + $1.assets } }
    /// One line per refused answer; a sync with any is a failed sync (the CLI exits 1).
    public var refusals: [String] { items.compactMap(\.refusal) }

    public var json: JSONValue {
        .object([
            "requests": .int(requests), "bytes": .int(bytes), "seconds": .double((seconds * 1000).rounded() / 1000),
            "blobsFetched": .int(blobsFetched), "blobBytesFetched": .int(blobBytesFetched), "blobsReused": .int(blobsReused),
            "assets": .int(assets), "fullBytes": .int(fullBytes), "refused": .array(refusals.map { .string($0) }),
            "dropped": ["blobs": .int(garbage.blobs), "bytes": .int(garbage.bytes), "manifests": .int(garbage.manifests), "partials": .int(garbage.partials)],
            "manifests": .array(items.map { item in
                var fields: [String: JSONValue] = [
                    "kind": .string(item.kind), "id": .string(item.id), "outcome": .string(item.outcome.rawValue),
                    "assets": .int(item.assets), "assetBytes": .int(item.assetBytes), "blobsFetched": .int(item.blobsFetched),
                    "blobBytesFetched": .int(item.blobBytesFetched), "blobsReused": .int(item.blobsReused), "resumedBytes": .int(item.resumedBytes),
                ]
                if let version = item.packageVersion { fields["packageVersion"] = .string(version) }
                if let deck = item.deckVersion { fields["deckVersion"] = .int(deck) }
                if let refusal = item.refusal { fields["refusal"] = .string(refusal) }
                return .object(fields)
            }),
        ])
    }
}

/// Progress of the blob downloads of one manifest.
public struct SyncProgress: Sendable {
    public var label: String
    public var done: Int
    public var total: Int
    public var bytes: Int
}
