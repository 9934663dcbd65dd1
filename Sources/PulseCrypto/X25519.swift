import COpenSSL
import Foundation

/// X25519 Diffie-Hellman (RFC 7748) over libcrypto: the key agreement behind age recipients.
/// Private keys and shared secrets are `SecretBytes` (wiped when released, never printed).
public enum X25519 {
    /// Byte length of private keys, public keys and shared secrets.
    public static let keyByteCount = 32

    /// A new random private key (32 bytes from the CSPRNG; clamping happens inside X25519).
    public static func generatePrivateKey() throws -> SecretBytes {
        try SecretBytes.random(count: keyByteCount)
    }

    /// The public key `X25519(privateKey, basepoint)`.
    public static func publicKey(privateKey: some ContiguousBytes) throws -> [UInt8] {
        let key = try RawKey(private: privateKey)
        var output = [UInt8](repeating: 0, count: keyByteCount)
        var length = keyByteCount
        try check(EVP_PKEY_get_raw_public_key(key.pointer, &output, &length), "EVP_PKEY_get_raw_public_key")
        guard length == keyByteCount else {
            throw CryptoError.badLength(what: "X25519 public key", expected: keyByteCount, actual: length)
        }
        return output
    }

    /// The shared secret `X25519(privateKey, publicKey)`.
    /// - Throws: `.invalidParameter` when the result is all zero (a low-order public key), which
    ///   protocols such as age must refuse; `.badLength` for keys that are not 32 bytes.
    public static func sharedSecret(privateKey: some ContiguousBytes, publicKey: [UInt8]) throws -> SecretBytes {
        let key = try RawKey(private: privateKey)
        let peer = try RawKey(public: publicKey)
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
            throw CryptoError.fromQueue("EVP_PKEY_CTX_new_from_pkey")
        }
        defer { EVP_PKEY_CTX_free(context) }
        try check(EVP_PKEY_derive_init(context), "EVP_PKEY_derive_init")
        try check(EVP_PKEY_derive_set_peer(context, peer.pointer), "EVP_PKEY_derive_set_peer")
        var output = [UInt8](repeating: 0, count: keyByteCount)
        defer { SecretBytes.wipe(&output) }
        var length = keyByteCount
        // libcrypto's X25519 itself fails when the result is all zero; both paths end in the same error.
        guard EVP_PKEY_derive(context, &output, &length) == 1 else {
            ERR_clear_error()
            throw zeroSharedSecret
        }
        guard length == keyByteCount else {
            throw CryptoError.badLength(what: "X25519 shared secret", expected: keyByteCount, actual: length)
        }
        guard !constantTimeEqual(output, [UInt8](repeating: 0, count: keyByteCount)) else { throw zeroSharedSecret }
        return SecretBytes(output)
    }

    static let zeroSharedSecret = CryptoError.invalidParameter("X25519 shared secret is all zero (low-order public key)")

    /// Owns an EVP_PKEY made from a raw X25519 key (libcrypto wipes a private key when freeing it).
    private final class RawKey {
        let pointer: OpaquePointer

        init(private bytes: some ContiguousBytes) throws { pointer = try Self.make(bytes, kind: "private", EVP_PKEY_new_raw_private_key_ex) }
        init(public bytes: [UInt8]) throws { pointer = try Self.make(bytes, kind: "public", EVP_PKEY_new_raw_public_key_ex) }

        deinit { EVP_PKEY_free(pointer) }

        private static func make(
            _ bytes: some ContiguousBytes, kind: String,
            _ constructor: (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<UInt8>?, Int) -> OpaquePointer?
        ) throws -> OpaquePointer {
            try bytes.withUnsafeBytes { raw in
                guard raw.count == X25519.keyByteCount else {
                    throw CryptoError.badLength(what: "X25519 \(kind) key", expected: X25519.keyByteCount, actual: raw.count)
                }
                guard let pointer = constructor(nil, "X25519", nil, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count) else {
                    throw CryptoError.fromQueue("EVP_PKEY_new_raw_\(kind)_key_ex(X25519)")
                }
                return pointer
            }
        }
    }
}
