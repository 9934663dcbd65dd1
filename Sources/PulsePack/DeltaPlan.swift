import Foundation
import PulseCore

/// The delta-sync plan between two manifests: what a phone holding `old` fetches and drops to hold `new`.
public struct DeltaPlan: Sendable {
    public var fetch: [AssetReference]
    public var drop: [AssetReference]
    public var kept: Int
    /// Bytes to download.
    public var bytes: Int { fetch.reduce(0) { $0 + $1.bytes } }
    /// Same packageVersion: the conditional manifest GET answers 304.
    public var unchanged: Bool

    public init(old: JSONValue, new: JSONValue) {
        let oldAssets = old.assetReferences, newAssets = new.assetReferences
        let oldHashes = Set(oldAssets.map(\.assetHash)), newHashes = Set(newAssets.map(\.assetHash))
        fetch = newAssets.filter { !oldHashes.contains($0.assetHash) }
        drop = oldAssets.filter { !newHashes.contains($0.assetHash) }
        kept = newAssets.count - fetch.count
        unchanged = PackageVersion.of(old) == PackageVersion.of(new)
    }

    public var json: JSONValue {
        [
            "unchanged": .bool(unchanged), "fetch": .array(fetch.map { ["assetHash": JSONValue($0.assetHash), "bytes": .int($0.bytes)] }),
            "drop": .array(drop.map { ["assetHash": JSONValue($0.assetHash), "bytes": .int($0.bytes)] }),
            "kept": .int(kept), "bytesToDownload": .int(bytes),
        ]
    }
}
