import PulseCrypto

/// One key that signs sync answers (`Pulse-Signature`, issue 21), with its schedule: it signs from
/// `signsFrom` until `signsUntil` (nil: until a rotation), and stays published until `signsUntil` plus `ttl`,
/// the longest answer TTL it signs with, when the last answer it signed has expired. A separate key from the
/// device certificate key.
public struct AnswerKeyRecord: Sendable {
    public let privateKey: P256.PrivateKey
    /// Unix seconds: the key signs no answer before.
    public let signsFrom: Int64
    /// Unix seconds: the key signs no answer from then on; nil until a newer key is scheduled.
    public let signsUntil: Int64?
    /// Grows with every key added: the key set's generation is the newest key's serial.
    public let serial: Int64
    /// Seconds: the longest `exp - iat` of any answer this key signs. Kept with the key in the database, so
    /// every server and `admin answer-key rotate` read the same value: each `serve` raises it to its
    /// `--answer-ttl` before it signs (`prepareAnswerKeys(signingFor:)`), a rotated key inherits it, and the key
    /// is published, then removed, by it.
    public let ttl: Int64

    /// The key id: the RFC 7638 thumbprint of the public key (computed once: every signed answer compares it).
    public let kid: String

    public init(privateKey: P256.PrivateKey, signsFrom: Int64, signsUntil: Int64?, serial: Int64, ttl: Int64 = AnswerKeyRecord.maxTTL) {
        self.privateKey = privateKey
        self.kid = privateKey.publicKey.jwkThumbprint
        self.signsFrom = signsFrom
        self.signsUntil = signsUntil
        self.serial = serial
        self.ttl = ttl
    }

    /// The longest answer TTL `serve --answer-ttl` accepts: the TTL of a key whose servers are not known.
    public static let maxTTL: Int64 = 86_400

    /// Unix seconds when the key is no longer published (`signsUntil` + its `ttl`, or + `atLeast` when that is
    /// longer: a server never unpublishes a key before its own answers by it expired); nil while it may sign.
    public func retiresAt(atLeast ttl: Int64 = 0) -> Int64? { signsUntil.map { $0 &+ max(self.ttl, ttl) } }

    /// True while the key is published at `now`.
    public func isPublished(at now: Int64, atLeast ttl: Int64 = 0) -> Bool { retiresAt(atLeast: ttl).map { now <= $0 } ?? true }

    /// A key from its PKCS#8 PEM bytes (as the database and `answer-key.pem` keep it).
    /// - Throws: `ServerError(.storage)` naming `what` (never quoting the bytes).
    static func parse(pem: [UInt8], signsFrom: Int64, signsUntil: Int64?, serial: Int64, ttl: Int64, what: String) throws -> AnswerKeyRecord {
        guard let key = try? P256.PrivateKey(pemRepresentation: pem) else {
            throw ServerError(.storage, "\(what) is not a P-256 PKCS#8 PEM key")
        }
        return AnswerKeyRecord(privateKey: key, signsFrom: signsFrom, signsUntil: signsUntil, serial: serial, ttl: ttl)
    }
}

extension AnswerKeyRecord {
    /// The PKCS#8 PEM bytes; the caller wipes them.
    func pem() throws -> [UInt8] { try privateKey.pemRepresentation().copyBytes() }
}
