import Foundation
import PulseCore
import PulseAnswerSignature
import PulseCrypto
@testable import PulseDevice
import PulseTestSupport

/// An in-memory server behind the `HTTPTransport` seam: manifests with ETags and 304s, blobs with Range and
/// If-Range, keys, the time, and faults (a corrupt blob, an answer cut short, a clock that disagrees).
/// Signatures are not checked here (the real server's tests do that); their timestamps are.
final class FakeServer: HTTPTransport, @unchecked Sendable {
    struct Seen {
        var method: String
        var target: String
        var headers: [String: String]
    }

    private let lock = NSLock()
    var manifests: [String: [UInt8]] = [:]   // "session/<id>" or "series/<id>"
    var blobs: [String: [UInt8]] = [:]
    var keys: [String: [UInt8]] = [:]        // session id → keys body
    var corrupt: Set<String> = []
    /// Blobs whose answer stops after this many body bytes (a connection lost mid-body).
    var cutAfter: [String: Int] = [:]
    /// The server's clock, and how far a signature's ts may be from it.
    var now: Int64 = 1_800_000_000
    var alwaysStale = false
    /// With keys, the server signs its manifest and keys answers (`Pulse-Signature`) with the last one and
    /// publishes them all at /api/sync/answer-keys (signed with the first); without, that route is a 404.
    var answerKeys: [P256.PrivateKey] = []
    var keySetSeq = 1
    /// Which of `answerKeys` signs the answers (default the last) and the key set (default the first).
    var answerSigner: Int?
    var keySetSigner: Int?
    /// The seq signed into each answer (the session's change sequence, the series' generation).
    var seq = 1
    var answerTTL: Int64 = 3600
    /// Changes each answer after it is signed (a hostile proxy's work).
    var tamper: (@Sendable (_ path: String, _ answer: inout (status: Int, headers: [String: String], body: [UInt8])) -> Void)?
    private(set) var seen: [Seen] = []

    @discardableResult
    func with<T>(_ body: (FakeServer) -> T) -> T { lock.withLock { body(self) } }

    var requests: [Seen] { lock.withLock { seen } }
    func reset() { lock.withLock { seen = [] } }

    /// Stores a manifest (its packageVersion: the SHA-256 of its bytes without the field, as good as any).
    @discardableResult
    func putManifest(_ key: String, _ value: JSONValue) -> [UInt8] {
        var fields = value.objectValue ?? [:]
        fields["packageVersion"] = .string(SHA256.hex(JSONValue.object(fields).canonicalBytes))
        let bytes = JSONValue.object(fields).canonicalBytes
        lock.withLock { manifests[key] = bytes }
        return bytes
    }

    /// A new blob of `size` random bytes; its reference.
    func putBlob(_ size: Int) throws -> AssetRef {
        let bytes = try SecureRandom.bytes(size)
        let hash = Digest(of: bytes)
        lock.withLock { blobs[hash.hex] = bytes }
        return AssetRef(hash: hash, bytes: size)
    }

    static func slides(_ refs: [AssetRef]) -> JSONValue {
        .array(refs.enumerated().map { ["n": .int($0.offset), "assetHash": JSONValue($0.element.hash), "bytes": .int($0.element.bytes)] })
    }

    func exchange(_ request: DeviceRequest, cancellation: Cancellation?, _ receive: @escaping @Sendable (TransportEvent) throws -> Void) throws {
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)!
        let path = components.percentEncodedPath
        let query = components.percentEncodedQuery.map { "?" + $0 } ?? ""
        var headers: [String: String] = [:]
        for header in request.headers { headers[header.name.lowercased()] = header.value }
        let answer: (status: Int, headers: [String: String], body: [UInt8], cut: Int?) = lock.withLock {
            seen.append(Seen(method: request.method, target: path + query, headers: headers))
            var answer = route(path: path, query: components.query ?? "", headers: headers)
            signed(path: path, query: components.percentEncodedQuery ?? "", headers: headers, &answer)
            if let tamper {
                var changed: (status: Int, headers: [String: String], body: [UInt8]) = (answer.0, answer.1, answer.2)
                tamper(path, &changed)
                answer = (changed.0, changed.1, changed.2, answer.3)
            }
            return answer
        }
        try receive(.head(status: answer.status, headers: answer.headers))
        var offset = 0
        let limit = answer.cut ?? answer.body.count
        while offset < limit {
            let end = min(offset + 1000, limit)
            try receive(.data(Array(answer.body[offset..<end])))
            offset = end
        }
        if answer.cut != nil { throw DeviceError(.network, "GET \(path): connection lost (a test)") }
    }

    /// Signs manifest and keys answers (200, 304) as pulse-server does, when it has answer keys.
    private func signed(path: String, query: String, headers: [String: String], _ answer: inout (Int, [String: String], [UInt8], Int?)) {
        guard let key = answerSigner.map({ answerKeys[$0] }) ?? answerKeys.last, answer.0 == 200 || answer.0 == 304 else { return }
        let device = String(headers["x-pulse-device"]?.split(separator: ";").first ?? "")
        var claims = AnswerClaims(route: path, query: query, device: device, status: answer.0, seq: seq, iat: Int(now), exp: Int(now + answerTTL))
        if path == "/api/sync/keys" {
            claims.deckVersion = (try? JSONValue.parse(answer.2))?["deckVersion"]?.intValue
        } else if path == "/api/sync/manifest" || path.hasSuffix("/manifest") {
            claims.packageVersion = answer.1["etag"].map { String($0.dropFirst().dropLast()) }
        } else {
            return
        }
        answer.1[AnswerSignature.headerName.lowercased()] = try? AnswerSignature.sign(body: answer.2, claims: claims, key: key)
    }

    /// The key set answer, signed with the first key (the oldest still published).
    private func keySet() -> (Int, [String: String], [UInt8], Int?) {
        guard let signer = keySetSigner.map({ answerKeys[$0] }) ?? answerKeys.first else { return (404, [:], Array(#"{"error":"notFound"}"#.utf8), nil) }
        let body = AnswerKeySet.encode(answerKeys.map { AnswerKey(publicKey: $0.publicKey, signsFrom: 0) })
        let claims = AnswerClaims(
            route: "/api/sync/answer-keys", query: "", device: "", status: 200, seq: keySetSeq, iat: Int(now), exp: Int(now + answerTTL))
        let header = (try? AnswerSignature.sign(body: body, claims: claims, key: signer)) ?? ""
        return (200, [AnswerSignature.headerName.lowercased(): header], body, nil)
    }

    /// Called with the lock held.
    private func route(path: String, query: String, headers: [String: String]) -> (Int, [String: String], [UInt8], Int?) {
        if let signed = headers["x-pulse-device"] {
            let ts = signed.split(separator: ";").first { $0.hasPrefix("ts=") }.flatMap { Int64($0.dropFirst(3)) } ?? 0
            if alwaysStale || abs(ts - now) > 300 { return (401, [:], Array(#"{"error":"staleSignature"}"#.utf8), nil) }
        }
        if path == "/api/sync/time" { return (200, [:], Array("{\"unixSeconds\":\(now)}".utf8), nil) }
        if path == "/api/sync/answer-keys" { return keySet() }
        if path == "/api/sync/manifest", let id = query.split(separator: "=").last { return manifest("session/\(id)", headers) }
        if path.hasPrefix("/api/sync/series/"), path.hasSuffix("/manifest") {
            return manifest("series/" + path.dropFirst(17).dropLast(9), headers)
        }
        if path == "/api/sync/keys", let id = query.split(separator: "=").last, let body = keys[String(id)] { return (200, [:], body, nil) }
        if path.hasPrefix("/api/sync/asset/") {
            let hash = String(path.dropFirst(16))
            guard var body = blobs[hash] else { return (404, [:], [], nil) }
            if corrupt.contains(hash) { body[0] ^= 0xff }
            let etag = "\"\(hash)\""
            if let range = headers["range"], range.hasPrefix("bytes="), let start = Int(range.dropFirst(6).dropLast()),
               headers["if-range"] == nil || headers["if-range"] == etag, start < body.count {
                return (206, ["etag": etag, "content-range": "bytes \(start)-\(body.count - 1)/\(body.count)"], Array(body[start...]), nil)
            }
            return (200, ["etag": etag], body, cutAfter.removeValue(forKey: hash))
        }
        return (404, [:], Array(#"{"error":"notFound"}"#.utf8), nil)
    }

    private func manifest(_ key: String, _ headers: [String: String]) -> (Int, [String: String], [UInt8], Int?) {
        guard let bytes = manifests[key], let version = (try? JSONValue.parse(bytes))?["packageVersion"]?.stringValue else {
            return (404, [:], Array(#"{"error":"notFound"}"#.utf8), nil)
        }
        let etag = "\"\(version)\""
        if headers["if-none-match"] == etag { return (304, ["etag": etag], [], nil) }
        return (200, ["etag": etag], bytes, nil)
    }
}

/// A key held in memory for tests.
struct MemoryKey: DeviceKey {
    let key: P256.PrivateKey
    init() throws { key = try P256.PrivateKey() }
    var publicKeySPKI: [UInt8] { key.publicKey.derRepresentation }
    func sign(_ message: [UInt8]) throws -> [UInt8] { try key.signature(for: message) }
}

/// A device folder talking to a `FakeServer`.
struct FakeDevice {
    let temporary: TestFolder
    let folder: DeviceFolder
    let cache: DeviceCache
    let client: SyncClient

    init(_ server: FakeServer, skew: Double = 0, name: String = #function) throws {
        temporary = try TestFolder(name)
        folder = try DeviceFolder.open(temporary.path("device"), create: true)
        cache = DeviceCache(folder: folder)
        let now = server.with { Double($0.now) }
        client = SyncClient(
            server: URL(string: "https://sync.example.net")!, transport: server, signer: RequestSigner(deviceId: String(repeating: "a", count: 32), key: try MemoryKey()),
            clock: DeviceClock(skew: skew, system: { now }))
    }

    func sync(_ target: Syncer.Target, parallel: Int = 3) throws -> SyncReport {
        try Syncer(cache: cache, client: client, parallel: parallel).sync(target)
    }

    var blobNames: Set<String> { Set((try? FileManager.default.contentsOfDirectory(atPath: folder.blobsURL.path)) ?? []) }
}
