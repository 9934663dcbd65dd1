import Foundation
import PulseAge
import PulseCore
import PulseCrypto

/// The server part written by hand from the spec (docs/package-format.md), so that import is tested
/// against the format rather than against the packager's code: manifests, key tables (plain or sealed),
/// gated files, then `server/index.json` by `commit()`. Every method returns what it wrote.
extension TestPackage {
    public struct Slide: Sendable {
        public var n: Int
        public var assetHash: String
        public var key: [UInt8]
        public var nonce: [UInt8]
    }

    /// Deterministic slides for a session and deck: same inputs, same keys.
    public static func slides(_ session: String, deckVersion: Int, count: Int, seed: String = "") -> [Slide] {
        (0..<count).map { n in
            let material = SHA256.hash(Array("\(session)/\(deckVersion)/\(n)/\(seed)".utf8))
            return Slide(n: n, assetHash: SHA256.hex(material + [1]), key: material, nonce: Array(SHA256.hash(material).prefix(12)))
        }
    }

    /// A gated resource as the package writes it.
    public struct Gated: Sendable {
        public var id: String
        public var releaseAfterSlide: Int?
        public var releaseAt: String?
        public var url: String

        public init(id: String, releaseAfterSlide: Int? = nil, releaseAt: String? = nil, url: String = "https://example.org/solutions") {
            self.id = id
            self.releaseAfterSlide = releaseAfterSlide
            self.releaseAt = releaseAt
            self.url = url
        }
    }

    /// Writes a session: manifest, key table (plain or sealed), gated file; records it in the index.
    @discardableResult
    public func addSession(
        _ id: String, deckVersion: Int = 1, slides count: Int = 5, seed: String = "", gated: [Gated] = [], series: String? = nil,
        note: String = "", sealedTo recipient: AgeRecipient? = nil, keyTable edit: ((inout [String: JSONValue]) -> Void)? = nil
    ) throws -> (packageVersion: String, slides: [Slide]) {
        let slides = Self.slides(id, deckVersion: deckVersion, count: count, seed: seed)
        var basics: [String: JSONValue] = ["id": .string(id), "title": .string("Talk \(id)"), "startsAt": "2026-12-03T09:00:00+01:00"]
        if let series { basics["seriesId"] = .string(series) }
        var resources: [JSONValue] = [["id": "visible", "title": "Wi-Fi", "kind": "note", "gated": false, "body": .string("password \(note)")]]
        resources += gated.map { ["id": .string($0.id), "title": .string("Resource \($0.id)"), "kind": "link", "gated": true] }
        let (manifest, version) = PackageVersion.stamped([
            "session": .object(basics), "resources": .array(resources), "deckVersion": .int(deckVersion),
            "slides": .array(slides.map { ["n": .int($0.n), "assetHash": .string($0.assetHash), "bytes": 1234] }),
        ])
        try write(manifest.prettyBytes, "sessions/\(id)/\(version).json")
        var table: [String: JSONValue] = [
            "sessionId": .string(id), "deckVersion": .int(deckVersion), "packageVersion": .string(version), "packageId": .string(packageId.hex),
            "slides": .array(slides.map {
                ["n": .int($0.n), "assetHash": .string($0.assetHash), "keyB64": .string(Data($0.key).base64EncodedString()),
                 "nonceB64": .string(Data($0.nonce).base64EncodedString())]
            }),
        ]
        edit?(&table)
        let tableBytes = JSONValue.object(table).prettyBytes
        if let recipient {
            try write(try Age.encrypt(tableBytes, to: [recipient]), "keys/\(id)/\(deckVersion).json.age")
        } else {
            try write(tableBytes, "keys/\(id)/\(deckVersion).json")
        }
        var gatedName: String? = nil
        if !gated.isEmpty {
            let gatedBytes = JSONValue.object([
                "sessionId": .string(id), "packageVersion": .string(version),
                "resources": .array(gated.map { resource in
                    var fields: [String: JSONValue] = [
                        "id": .string(resource.id),
                        "entry": ["id": .string(resource.id), "title": .string("Resource \(resource.id)"), "kind": "link", "gated": false, "url": .string(resource.url)],
                    ]
                    if let slide = resource.releaseAfterSlide { fields["releaseAfterSlide"] = .int(slide) }
                    if let moment = resource.releaseAt { fields["releaseAt"] = .string(moment) }
                    return .object(fields)
                }),
            ]).prettyBytes
            gatedName = SHA256.hex(gatedBytes)
            try write(gatedBytes, "gated/\(id)/\(gatedName!).json")
        }
        sessions[id] = [
            "packageVersion": .string(version), "deckVersion": .int(deckVersion), "deckDigest": .string(String(repeating: "0", count: 64)),
            "highestDeckVersion": .int(deckVersion),
        ]
        if let gatedName { sessions[id] = .object(sessions[id]!.objectValue!.merging(["gated": .string(gatedName)]) { $1 }) }
        return (version, slides)
    }

    /// Writes a series manifest whose refs name the sessions at their current versions.
    @discardableResult
    public func addSeries(_ id: String, sessions ids: [String]) throws -> String {
        let (manifest, version) = PackageVersion.stamped([
            "series": ["id": .string(id), "title": "Conference", "timezone": "Europe/Berlin"], "rooms": [], "days": [],
            "sessions": .array(ids.map { ["id": .string($0), "title": .string("Talk \($0)"), "packageVersion": sessions[$0]?["packageVersion"] ?? "?"] }),
        ])
        try write(manifest.prettyBytes, "series/\(id)/\(version).json")
        series[id] = ["packageVersion": .string(version)]
        return version
    }

    /// Writes `server/index.json` (the commit point): call after adding sessions and series.
    public func commit() throws {
        try write(JSONValue.object([
            "format": "pulse-package/2", "packageId": .string(packageId.hex), "sessions": .object(sessions), "series": .object(series),
            "appconfig": [:], "history": [:],
        ]).prettyBytes, "index.json")
    }

    public func write(_ bytes: [UInt8], _ relative: String) throws {
        let url = server.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
    }

    public func url(_ relative: String) -> URL { server.appendingPathComponent(relative) }

    /// The current gated file of a session, relative to the server part.
    public func gatedFile(_ session: String) -> String { "gated/\(session)/\(sessions[session]!["gated"]!.stringValue!).json" }

    /// Rewrites a JSON file of the server part.
    public func edit(_ relative: String, _ change: (inout [String: JSONValue]) -> Void) throws {
        guard case var .object(fields) = try JSONValue.parse(Data(contentsOf: url(relative))) else { return }
        change(&fields)
        try write(JSONValue.object(fields).prettyBytes, relative)
    }

    /// Names a (changed) gated file by its hash again and points the index at it.
    public func rename(_ relative: String, session: String) throws {
        let bytes = Array(try Data(contentsOf: url(relative)))
        let name = SHA256.hex(bytes)
        try write(bytes, "gated/\(session)/\(name).json")
        sessions[session] = .object(sessions[session]!.objectValue!.merging(["gated": .string(name)]) { $1 })
        try commit()
    }
}
