import Foundation
import PulseCore
import PulseCrypto
import PulseServer
import PulseServerStorage

/// Import plans built by hand for storage tests (the package reader has its own tests).
enum TestContent {
    static let packageA = String(repeating: "a", count: 32)
    static let packageB = String(repeating: "b", count: 32)
    static let packageAID = PackageID(packageA)!
    static let packageBID = PackageID(packageB)!

    /// A key table whose keys depend on `seed`: same seed, same keys.
    static func keyTable(session: String, deckVersion: Int, slides: Int, packageId: PackageID = packageAID, seed: String = "") -> KeyTableRecord {
        KeyTableRecord(sessionId: session, deckVersion: deckVersion, packageId: packageId, slides: (0..<slides).map { n in
            let digest = SHA256.hash(Array("\(session)/\(deckVersion)/\(n)/\(seed)".utf8))
            return SlideKey(
                n: n, assetHash: Digest(of: digest), keyB64: Data(digest).base64EncodedString(),
                nonceB64: Data(digest.prefix(12)).base64EncodedString())
        })
    }

    static func session(
        _ id: String, deckVersion: Int = 1, slides: Int = 10, packageId: PackageID = packageAID, seed: String = "", manifestNote: String = "",
        gated: [GatedResource] = [], series: String? = nil
    ) -> SessionImport {
        let manifest = JSONValue.object([
            "session": ["id": .string(id)], "deckVersion": .int(deckVersion), "note": .string(manifestNote),
            "slides": .array((0..<slides).map { ["n": .int($0)] }),
        ])
        let (stamped, version) = PackageVersion.stamped(manifest)
        return SessionImport(
            id: id, seriesId: series, packageVersion: version, deckVersion: deckVersion, slideCount: slides, manifest: stamped.prettyBytes,
            gated: gated, keyTable: keyTable(session: id, deckVersion: deckVersion, slides: slides, packageId: packageId, seed: seed))
    }

    static func series(_ id: String, sessions: [String], note: String = "") -> SeriesImport {
        let manifest = JSONValue.object(["series": ["id": .string(id)], "note": .string(note), "sessions": .array(sessions.map { ["id": .string($0)] })])
        let (stamped, version) = PackageVersion.stamped(manifest)
        return SeriesImport(id: id, packageVersion: version, manifest: stamped.prettyBytes, sessionIds: sessions)
    }

    static func plan(_ sessions: [SessionImport], series: [SeriesImport] = [], packageId: PackageID = packageAID) -> ImportPlan {
        ImportPlan(packageId: packageId, sessions: sessions, series: series)
    }

    /// Imports one session `id` (10 slides) and returns its record.
    @discardableResult
    static func seed(_ storage: any ServerStorage, _ ids: String..., state: SessionState? = nil) throws -> [SessionRecord] {
        _ = try storage.importContent(plan(ids.map { session($0) }), options: ImportOptions(), at: 1000)
        return try ids.map { id in
            if let state { _ = try storage.updateSession(id: id, SessionUpdate(state: state), at: 1000) }
            return try storage.session(id: id)!
        }
    }

    /// A public key stand-in: storage keeps bytes, the HTTP layer validates them.
    static func publicKey(_ n: Int) -> [UInt8] { SHA256.hash(Array("device \(n)".utf8)) }
}
