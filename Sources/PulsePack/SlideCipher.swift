import Foundation
import PulseCore
import PulseCrypto

/// Per-slide AES-256-GCM keys, bound to the package and the session, derived so that an unchanged slide
/// of a session keeps its blob across rebuilds (docs/crypto.md):
///
///     info       = lp(packageId) ‖ lp(sessionId) ‖ SHA-256(plaintext)      lp(x) = 4-byte big-endian length ‖ x
///     key‖nonce  = HKDF-SHA256(ikm: package secret, salt: "pulse-pack/v2/slide", info, 44 bytes)
///     blob       = AES-256-GCM(key, nonce, plaintext, aad: none) ‖ tag       name = SHA-256(blob)
///
/// A (key, nonce) pair is a function of (package, session, plaintext hash), so it only ever encrypts that
/// one plaintext, and the same slide in another session or another package gets another key and another
/// blob: releasing a key in one session opens nothing in another. There is no AAD; were one added, the
/// same fields must go into `info` as well.
public struct SlideCipher: Sendable {
    public static let secretByteCount = 32
    static let salt = Array("pulse-pack/v2/slide".utf8)

    private let secret: SecretBytes
    /// `lp(packageId) ‖ lp(sessionId)`: the fixed start of every `info` of this session.
    private let context: [UInt8]

    /// - Parameters:
    ///   - packageId: the package's id, 32 hex digits (its 16 raw bytes are bound).
    ///   - sessionId: the session's id (its UTF-8 bytes are bound).
    public init(secret: SecretBytes, packageId: PackageID, sessionId: String) {
        precondition(secret.count == Self.secretByteCount, "the package secret is 32 bytes")
        self.secret = secret
        context = Self.lengthPrefixed(packageId.bytes) + Self.lengthPrefixed(Array(sessionId.utf8))
    }

    /// `lp(x)`: the length as 4 bytes, big-endian, then the bytes.
    static func lengthPrefixed(_ bytes: [UInt8]) -> [UInt8] {
        let length = UInt32(bytes.count)
        return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: length >> $0) } + bytes
    }

    /// The key and nonce for a slide of this session whose plaintext hashes to `plaintextHash`.
    public func keyAndNonce(plaintextHash: [UInt8]) throws -> (key: SecretBytes, nonce: SecretBytes) {
        let material = try HKDF.sha256(secret: secret, salt: Self.salt, info: context + plaintextHash, count: 44)
        return (material.subrange(0..<32), material.subrange(32..<44))
    }

    /// Encrypts one slide.
    public func seal(_ plaintext: some ContiguousBytes) throws -> SealedSlide {
        let (key, nonce) = try keyAndNonce(plaintextHash: SHA256.hash(plaintext))
        let ciphertext = try AES256GCM.seal(plaintext, key: key, nonce: nonce)
        return SealedSlide(ciphertext: ciphertext, assetHash: Digest(of: ciphertext), key: key, nonce: nonce)
    }

    /// `seal` into a buffer the caller keeps for the next slide (no allocation per slide): the blob is
    /// `ciphertext[..<sealed.count]`, the same bytes as `seal(plaintext).ciphertext`.
    public func seal(_ plaintext: some ContiguousBytes, into ciphertext: inout [UInt8]) throws -> SealedSlideInPlace {
        let (key, nonce) = try keyAndNonce(plaintextHash: SHA256.hash(plaintext))
        // The blob's name is hashed as the cipher writes it, while each piece is still in the cache.
        let (count, name) = try AES256GCM.sealHashing(plaintext, key: key, nonce: nonce, into: &ciphertext)
        guard let assetHash = Digest(bytes: name) else { preconditionFailure("SHA-256 is 32 bytes") }
        return SealedSlideInPlace(count: count, assetHash: assetHash, key: key, nonce: nonce)
    }
}

/// One encrypted slide: the blob, its name and the key material the key server will release.
public struct SealedSlide: Sendable {
    public let ciphertext: [UInt8]
    public let assetHash: Digest
    public let key: SecretBytes
    public let nonce: SecretBytes
}

/// A slide sealed into a caller's buffer: how many of its bytes are the blob, the blob's name and the key
/// material.
public struct SealedSlideInPlace: Sendable {
    public let count: Int
    public let assetHash: Digest
    public let key: SecretBytes
    public let nonce: SecretBytes
}
