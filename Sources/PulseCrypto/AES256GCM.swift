import Foundation

/// AES-256-GCM with a 96-bit nonce and a 128-bit tag appended to the ciphertext.
public enum AES256GCM {
    public static let keyByteCount = EVPAEAD.keyByteCount
    public static let nonceByteCount = EVPAEAD.nonceByteCount
    public static let tagByteCount = EVPAEAD.tagByteCount
    static let aead = EVPAEAD(cipher: Ciphers.aes256gcm, name: "AES-256-GCM")

    /// Encrypts `plaintext`; returns ciphertext ‖ tag.
    public static func seal(
        _ plaintext: some ContiguousBytes, key: [UInt8], nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws -> [UInt8] {
        try aead.seal(plaintext, key: key, nonce: nonce, aad: aad)
    }

    /// Encrypts `plaintext` into the start of `output` (grown when too short, its storage kept: no
    /// allocation for a buffer sealed into again and again); returns the count written, ciphertext ‖ tag.
    public static func seal(
        _ plaintext: some ContiguousBytes, key: [UInt8], nonce: [UInt8], authenticating aad: [UInt8] = [], into output: inout [UInt8]
    ) throws -> Int {
        try aead.seal(plaintext, key: key, nonce: nonce, aad: aad, into: &output)
    }

    /// `seal(_:key:nonce:authenticating:into:)` that also returns the SHA-256 of what it wrote (the
    /// ciphertext ‖ tag), hashed piece by piece as it is written rather than in a second pass.
    public static func sealHashing(
        _ plaintext: some ContiguousBytes, key: [UInt8], nonce: [UInt8], authenticating aad: [UInt8] = [], into output: inout [UInt8]
    ) throws -> (count: Int, sha256: [UInt8]) {
        let (count, digest) = try aead.sealHashing(plaintext, key: key, nonce: nonce, aad: aad, into: &output)
        return (count, digest)
    }

    /// Decrypts ciphertext ‖ tag; throws `.authenticationFailure` if anything was changed.
    public static func open(
        _ sealed: some ContiguousBytes, key: [UInt8], nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws -> [UInt8] {
        try aead.open(sealed, key: key, nonce: nonce, aad: aad)
    }
}
