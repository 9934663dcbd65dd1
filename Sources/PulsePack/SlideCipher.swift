import Foundation
import PulseCrypto

/// Per-slide AES-256-GCM keys, derived so that an unchanged slide keeps its blob across rebuilds.
///
///     h          = SHA-256(plaintext)
///     key‖nonce  = HKDF-SHA256(ikm: package secret, salt: "pulse-pack/v1/slide", info: h, 44 bytes)
///     blob       = AES-256-GCM(key, nonce, plaintext) ‖ tag       name = SHA-256(blob)
///
/// A (key, nonce) pair is a function of the plaintext's hash, so it only ever encrypts that one
/// plaintext: two different slides would need a SHA-256 collision to share a pair. Re-encrypting the
/// same slide repeats the same ciphertext (deterministic encryption), which reveals only that two
/// blobs are equal, something content addressing shows anyway. docs/crypto.md has the full argument.
public struct SlideCipher: Sendable {
    public static let secretByteCount = 32
    static let salt = Array("pulse-pack/v1/slide".utf8)

    private let secret: [UInt8]

    public init(secret: [UInt8]) {
        precondition(secret.count == Self.secretByteCount, "the package secret is 32 bytes")
        self.secret = secret
    }

    /// The key and nonce for a slide whose plaintext hashes to `plaintextHash`.
    public func keyAndNonce(plaintextHash: [UInt8]) throws -> (key: [UInt8], nonce: [UInt8]) {
        let material = try HKDF.sha256(inputKeyMaterial: secret, salt: Self.salt, info: plaintextHash, count: 44)
        return (Array(material[0..<32]), Array(material[32..<44]))
    }

    /// Encrypts one slide.
    public func seal(_ plaintext: some ContiguousBytes) throws -> SealedSlide {
        let (key, nonce) = try keyAndNonce(plaintextHash: SHA256.hash(plaintext))
        let ciphertext = try AES256GCM.seal(plaintext, key: key, nonce: nonce)
        return SealedSlide(ciphertext: ciphertext, assetHash: SHA256.hex(ciphertext), key: key, nonce: nonce)
    }
}

/// One encrypted slide: the blob, its name and the key material the key server will release.
public struct SealedSlide: Sendable {
    public let ciphertext: [UInt8]
    public let assetHash: String
    public let key: [UInt8]
    public let nonce: [UInt8]
}
