import PulseCore
import PulseCrypto

/// An asset a manifest names: `{ "assetHash": "<64 hex>", "bytes": n }` (slides, speaker photos, logos).
public struct AssetRef: Hashable, Sendable, Comparable {
    public let hash: Digest
    public let bytes: Int

    public init(hash: Digest, bytes: Int) {
        self.hash = hash
        self.bytes = bytes
    }

    public static func < (lhs: AssetRef, rhs: AssetRef) -> Bool { lhs.hash < rhs.hash }
}

/// A manifest as the device keeps it: the exact bytes served, and what the device reads from them.
public struct Manifest: Sendable {
    public struct Slide: Sendable, Equatable {
        public let n: Int
        public let asset: AssetRef
    }

    /// A series manifest's ref to one of its sessions.
    public struct SessionRef: Sendable, Equatable {
        public let id: String
        public let packageVersion: String
    }

    public let bytes: [UInt8]
    public let json: JSONValue
    /// Every asset named anywhere in it, once each, sorted by hash.
    public let assets: [AssetRef]

    public var packageVersion: String? { json["packageVersion"]?.stringValue }
    public var deckVersion: Int? { json["deckVersion"]?.intValue }

    /// A session manifest's deck, in slide order.
    public var slides: [Slide] {
        (json["slides"]?.arrayValue ?? []).compactMap { entry in
            guard let n = entry["n"]?.intValue, let hash = entry["assetHash"]?.digestValue, let bytes = entry["bytes"]?.intValue else { return nil }
            return Slide(n: n, asset: AssetRef(hash: hash, bytes: bytes))
        }.sorted { $0.n < $1.n }
    }

    /// A series manifest's session refs.
    public var sessionRefs: [SessionRef] {
        (json["sessions"]?.arrayValue ?? []).compactMap { entry in
            guard let id = entry["id"]?.stringValue, let version = entry["packageVersion"]?.stringValue else { return nil }
            return SessionRef(id: id, packageVersion: version)
        }
    }

    /// Parses and checks a manifest: a JSON object, every asset reference a SHA-256 name with a sane size,
    /// and for a session (`isSession`) a deck of slides numbered from 0 and a deckVersion.
    /// - Throws: `DeviceError.server` naming what is wrong (`what` says which manifest).
    public static func parse(_ bytes: [UInt8], isSession: Bool, what: String) throws -> Manifest {
        let json: JSONValue
        do { json = try JSONValue.parse(bytes) } catch { throw DeviceError(.server, "\(what): not JSON (\(error))") }
        guard case .object = json else { throw DeviceError(.server, "\(what): not a JSON object") }
        var found = Set<AssetRef>()
        try collect(json, into: &found, what: what)
        let manifest = Manifest(bytes: bytes, json: json, assets: found.sorted())
        if isSession {
            let entries = json["slides"]?.arrayValue ?? []
            let slides = manifest.slides
            guard slides.count == entries.count, slides.map(\.n) == Array(0..<slides.count) else {
                throw DeviceError(.server, "\(what): slides must be [{n, assetHash, bytes}] numbered from 0")
            }
            guard manifest.deckVersion != nil else { throw DeviceError(.server, "\(what): no deckVersion") }
        }
        return manifest
    }

    private static func collect(_ value: JSONValue, into found: inout Set<AssetRef>, what: String) throws {
        switch value {
        case let .object(fields):
            if let hash = fields["assetHash"] {
                guard let name = hash.digestValue, let bytes = fields["bytes"]?.intValue,
                      (0...(1 << 31)).contains(bytes)
                else { throw DeviceError(.server, "\(what): an asset reference is not {assetHash: <64 lowercase hex>, bytes: <size>}") }
                found.insert(AssetRef(hash: name, bytes: bytes))
            }
            for field in fields.values { try collect(field, into: &found, what: what) }
        case let .array(items):
            for item in items { try collect(item, into: &found, what: what) }
        default:
            break
        }
    }
}
