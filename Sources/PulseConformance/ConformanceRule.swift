/// One rule a server must keep, from the contract (`../shared/contract/pulse-mobile-sync.txt`) or, where
/// the contract leaves a detail to the server, from docs/server.md (said in `source`).
public struct ConformanceRule: Sendable, Equatable {
    public let id: String
    /// Where the rule comes from: `§1` … `§5` of the contract, or `server.md`.
    public let source: String
    public let summary: String
    /// True when the rule cannot run without a staff token (it drives the session's state or revokes a device).
    public let needsStaff: Bool

    init(_ id: String, _ source: String, _ summary: String, staff: Bool = false) {
        self.id = id
        self.source = source
        self.summary = summary
        self.needsStaff = staff
    }
}

/// Every rule, in the order the suite reports them.
public enum RuleCatalog {
    public static let all: [ConformanceRule] = [
        ConformanceRule("enroll.bad-key", "§1", "a public key that is not a valid P-256 SubjectPublicKeyInfo (base64) → 400 {\"error\":\"badKey\"}"),
        ConformanceRule("enroll.unknown-token", "§1", "an unknown token → the flat 404"),
        ConformanceRule("enroll.code-single-use", "§1", "a device code enrolls one device; used again → the flat 404, byte for byte the unknown token's"),
        ConformanceRule("enroll.token-durable", "§1", "a registration token enrolls more than one device"),
        ConformanceRule("enroll.certificate", "§1", "deviceCert verifies with a key of /api/sync/device-cert-keys and names the device and its key"),
        ConformanceRule("enroll.rate-limit", "§1", "a burst of enrollments from one address → 429 with Retry-After"),
        ConformanceRule("sign.canonical", "§2", "a signature over METHOD\\nPATH\\nQUERY\\nts\\nSHA256(body) is accepted; over another method, path, query, ts or body → the flat 404"),
        ConformanceRule("sign.p1363", "§2", "the signature is IEEE P1363 r‖s in base64url: DER, or padded standard base64 → the flat 404"),
        ConformanceRule("sign.window", "§2", "ts within ±300 s of the server's clock is accepted; 310 s off either way → 401 staleSignature"),
        ConformanceRule("sign.ts-exact", "§2", "ts is signed as written: zero-padded (01…) or signed (+…) → the flat 404, whatever was signed; a ts of 20 digits → the flat 404, and the server answers on"),
        ConformanceRule("sign.stale-uniform", "§2", "the stale 401 is byte for byte the same for an enrolled, an unknown and a revoked device"),
        ConformanceRule("sign.flat-404", "§2", "no header, a malformed or doubled one, an unknown or revoked device, a bad signature → byte-identical 404s"),
        ConformanceRule("sign.rate-limit", "§2", "more than about 5 keys calls a second from one device → 429"),
        ConformanceRule("manifest.etag", "§3", "the session manifest's ETag is the strong \"<packageVersion>\" of its body"),
        ConformanceRule("manifest.not-modified", "§3", "If-None-Match with the ETag (also weak, also in a list) → 304 without a body; another tag → 200"),
        ConformanceRule("manifest.scope", "§3", "a device reads the sessions of its scope; an unknown session, or one outside its scope → the flat 404"),
        ConformanceRule("manifest.content", "§3", "slides [{n, assetHash, bytes}] from 0, a deckVersion, gated resources without url or body, no release times anywhere"),
        ConformanceRule("series.manifest", "§3", "day-grouped items, rooms, and a {id, title, packageVersion} ref per session matching that session's ETag; 304 on its ETag"),
        ConformanceRule("asset.content-addressed", "§3", "every slide's asset hashes to its name and has the manifest's length; an unknown hash → 404"),
        ConformanceRule("asset.immutable", "§3", "asset answers are cacheable by anyone, immutable, for a long time"),
        ConformanceRule("appconfig.public", "§3", "GET /api/sync/appconfig?org= answers the branding without any credential"),
        ConformanceRule("keys.gated-before-live", "§4", "draft, scheduled and rehearsal (even after a rehearsal advance) release no key", staff: true),
        ConformanceRule("keys.live-frontier", "§4", "live releases exactly slides 0…maxShown, each key opening its slide's blob, none beyond", staff: true),
        ConformanceRule("keys.venue-lock", "§4", "a venue-locked live deck releases nothing to a request from outside the venue networks", staff: true),
        ConformanceRule("keys.ended", "§4", "ended without download permission stays at the frontier; with it, the whole deck", staff: true),
        ConformanceRule("keys.deck-version", "§4", "the keys answer's deckVersion is the cached manifest's"),
        ConformanceRule("time.display", "§4", "GET /api/sync/time is public and answers unixSeconds"),
        ConformanceRule("answer.keys", "server.md", "GET /api/sync/answer-keys is public: a JWK set whose own Pulse-Signature (route /api/sync/answer-keys, device \"\") verifies with one of its keys; SKIP when the server does not sign"),
        ConformanceRule("answer.signature", "server.md", "session manifest (200 and 304), keys and series manifest carry a Pulse-Signature that verifies and binds route, query, device, status, packageVersion/deckVersion; error answers carry none"),
        ConformanceRule("answer.sequence", "server.md", "the same answer fetched again never carries a lower seq (or deckVersion), nor another packageVersion at the same seq"),
        ConformanceRule("answer.expiry", "server.md", "exp is not before the server's clock, iat not after it, and exp − iat within 60…86400 s"),
        ConformanceRule("diag.sample", "§5", "a signed sample is accepted (2xx), an unsigned one is the flat 404; staff see it in the live view"),
        ConformanceRule("diag.replay", "server.md", "the same signed POST sent again → the flat 404"),
        ConformanceRule("events.advance", "server.md", "the session's event stream delivers an advance within a second of the staff advance", staff: true),
    ]

    public static func rule(_ id: String) -> ConformanceRule? { all.first { $0.id == id } }
}
