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
/// entry costs its header, not a copy of its body. The cache is bounded by entries and by the bytes of its
/// distinct bodies; when either would be exceeded it starts over (a body already held adds no bytes, so it
/// never does for one).
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
    }

    private struct Cache {
        var entries: [Binding: Entry] = [:]
        /// The distinct bodies, by SHA-256, each in one buffer every entry with that body sends from.
        var bodies: [[UInt8]: ByteBuffer] = [:]
        var bodyBytes = 0
    }

    private let cache = Mutex(Cache())
    /// Signed answers held at most, and bytes of distinct bodies (defaults: 100,000 and 128 MiB).
    let maxEntries: Int
    let maxBodyBytes: Int

    init(keyring: AnswerKeyring, ttl: Int64, maxEntries: Int = 100_000, maxBodyBytes: Int = 128 << 20) {
        self.keyring = keyring
        self.ttl = ttl
        self.maxEntries = maxEntries
        self.maxBodyBytes = maxBodyBytes
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
        let buffer = cache.withLock { cache -> ByteBuffer in
            // A new answer when the entries are full starts over; so does a new body over the byte budget. A body
            // held already costs nothing more (one keys answer sent to every device): starting over for it would
            // throw away every signature kept, to be made again.
            let entriesFull = cache.entries.count >= maxEntries && cache.entries[binding] == nil
            if !entriesFull, let held = cache.bodies[digest] { return held }
            if entriesFull || cache.bodyBytes + body.count > maxBodyBytes {
                cache = Cache()
            }
            let made = ByteBuffer(body)
            cache.bodies[digest] = made
            cache.bodyBytes += body.count
            return made
        }
        let shared = SharedResponse(HTTPResponse(
            status: response.status, headers: response.headers + [HTTPHeader(AnswerSignature.headerName, header)],
            body: body.isEmpty ? .empty : .buffer(buffer, offset: 0, count: body.count)))
        cache.withLock { $0.entries[binding] = Entry(body: body, kid: kid, iat: now, response: shared) }
        return HTTPResponse(shared, note: response.note)
    }

    /// Signed answers held now (tests).
    var cachedCount: Int { cache.withLock { $0.entries.count } }
}
