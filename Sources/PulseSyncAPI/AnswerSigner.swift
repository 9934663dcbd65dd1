import PulseAnswerSignature
import PulseCrypto
import PulseHTTPServer
import PulseServerStorage
import Synchronization

/// Puts `Pulse-Signature` on the signed answers (session manifest, series manifest, keys, answer keys;
/// 200 and 304), never on an error.
///
/// Signing costs an ES256 signature, so signed answers are kept, prepared, per (claims but time, device,
/// body): a repeated fetch of an unchanged answer is sent again as it was, until half its TTL has passed
/// (then it is signed anew, so a device always holds one valid for at least half the TTL) or the signing
/// key changes. Equal bodies (one keys answer sent to every device released as far) share one buffer, so an
/// entry costs its header and its key, not a copy of its body. The cache is bounded by entries and by bytes:
/// its distinct bodies plus each entry's own (the binding's strings, the `Pulse-Signature` header, which
/// carries the query again); when either is full it starts over. A device chooses its query (up to the ~7 KB
/// a request line may have, and every distinct one is an entry of its own), so counting only the bodies would
/// let a few enrolled devices hold 100,000 entries of ~17 KB each.
final class AnswerSigner: Sendable {
    let keyring: AnswerKeyring
    /// Seconds from `iat` to `exp`.
    let ttl: Int64

    /// What an answer is signed as, less the time: the cache key (with the body, compared on a hit).
    struct Binding: Hashable, Sendable {
        var route: String
        var query: String
        var device: String
        var status: Int
        var seq: Int
        var packageVersion: String?
        var deckVersion: Int?
    }

    private struct Entry {
        let body: [UInt8]
        let kid: String
        let iat: Int64
        let response: SharedResponse
        /// What it holds of its own (`Cache.bytes`).
        let cost: Int
    }

    private struct Cache {
        var entries: [Binding: Entry] = [:]
        /// The distinct bodies, by SHA-256, each in one buffer every entry with that body sends from.
        var bodies: [[UInt8]: ByteBuffer] = [:]
        /// The distinct bodies' bytes and every entry's cost.
        var bytes = 0
    }

    private let cache = Mutex(Cache())
    let maxEntries: Int
    let maxBytes: Int

    init(keyring: AnswerKeyring, ttl: Int64, maxEntries: Int = 100_000, maxBytes: Int = 128 << 20) {
        self.keyring = keyring
        self.ttl = ttl
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
    }

    /// An entry's own bytes: its binding's strings, its header, and a fixed share for the rest (dictionary
    /// slot, the shared response's head).
    static func cost(_ binding: Binding, header: String) -> Int {
        binding.route.utf8.count + binding.query.utf8.count + binding.device.utf8.count + (binding.packageVersion?.utf8.count ?? 0)
            + header.utf8.count + 256
    }

    /// `response` (200 with a `.bytes` body, or a 304) with its `Pulse-Signature`, prepared to be shared.
    /// - Throws: what signing throws (libcrypto out of memory): the caller answers 500.
    func signed(_ response: HTTPResponse, _ binding: Binding, at now: Int64, generation: StorageGeneration) throws -> HTTPResponse {
        let body: [UInt8]
        switch response.body {
        case let .bytes(bytes): body = bytes
        default: body = []
        }
        let keys = keyring.keys(at: generation)
        guard let signer = AnswerKeyring.signer(keys, at: now) else { throw ServerError(.storage, "no answer-signing key") }
        let kid = signer.kid
        if let held = cache.withLock({ $0.entries[binding] }), held.kid == kid, now < held.iat + ttl / 2, now >= held.iat, held.body == body {
            return HTTPResponse(held.response, note: response.note)
        }
        let claims = AnswerClaims(
            route: binding.route, query: binding.query, device: binding.device, status: binding.status, seq: binding.seq,
            packageVersion: binding.packageVersion, deckVersion: binding.deckVersion, iat: Int(now), exp: Int(now + ttl))
        let header = try AnswerSignature.sign(body: body, claims: claims, key: signer.privateKey)
        let digest = SHA256.hash(body)
        let cost = Self.cost(binding, header: header)
        let buffer = cache.withLock { cache -> ByteBuffer in
            // A body held already (one keys answer sent to every device) adds only the entry's own bytes, and
            // an answer replacing its own entry does not make the entries more: neither starts over needlessly.
            let added = cost + (cache.bodies[digest] == nil ? body.count : 0) - (cache.entries[binding]?.cost ?? 0)
            let entriesFull = cache.entries.count >= maxEntries && cache.entries[binding] == nil
            if entriesFull || cache.bytes + added > maxBytes {
                cache = Cache()
            }
            if let held = cache.bodies[digest] { return held }
            let made = ByteBuffer(body)
            cache.bodies[digest] = made
            cache.bytes += body.count
            return made
        }
        let shared = SharedResponse(HTTPResponse(
            status: response.status, headers: response.headers + [HTTPHeader(AnswerSignature.headerName, header)],
            body: body.isEmpty ? .empty : .buffer(buffer, offset: 0, count: body.count)))
        cache.withLock { cache in
            let replaced = cache.entries.updateValue(Entry(body: body, kid: kid, iat: now, response: shared, cost: cost), forKey: binding)
            cache.bytes += cost - (replaced?.cost ?? 0)
        }
        return HTTPResponse(shared, note: response.note)
    }

    /// Signed answers held now (tests).
    var cachedCount: Int { cache.withLock { $0.entries.count } }

    /// Bytes the cache counts as held now (tests).
    var cachedBytes: Int { cache.withLock { $0.bytes } }
}
