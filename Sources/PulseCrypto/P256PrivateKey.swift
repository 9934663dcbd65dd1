import COpenSSL
import Foundation

extension P256 {
    /// A P-256 signing key. libcrypto holds the scalar inside the EVP_PKEY and wipes it when the key
    /// is freed (`BN_clear_free`); exports come out as `SecretBytes`. Printing shows only the public
    /// key's thumbprint.
    ///
    /// The key file is PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, unencrypted): write it with mode 0600
    /// in a 0700 folder; it is never logged.
    public final class PrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable
    {
        let key: EVPKey
        /// The matching public key.
        public let publicKey: PublicKey

        /// A new random key from libcrypto's DRBG.
        public convenience init() throws {
            guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw CryptoError.fromQueue("EVP_PKEY_CTX_new_from_name(EC)") }
            defer { EVP_PKEY_CTX_free(context) }
            try check(EVP_PKEY_keygen_init(context), "EVP_PKEY_keygen_init")
            try check(EVP_PKEY_CTX_set_group_name(context, "P-256"), "EVP_PKEY_CTX_set_group_name")
            var made: OpaquePointer?
            try check(EVP_PKEY_generate(context, &made), "EVP_PKEY_generate")
            guard let made else { throw CryptoError.fromQueue("EVP_PKEY_generate") }
            try self.init(validating: EVPKey(made))
        }

        /// Imports an unencrypted PKCS#8 `PrivateKeyInfo` (DER).
        /// - Throws: `CryptoError.badKey` for anything but a valid P-256 key with nothing after it.
        public convenience init(pkcs8DERRepresentation der: some ContiguousBytes) throws {
            let made: OpaquePointer? = der.withUnsafeBytes { bytes in
                var cursor = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
                guard let base = cursor, let info = d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, bytes.count) else { return nil }
                defer { PKCS8_PRIV_KEY_INFO_free(info) }
                guard cursor == base + bytes.count else { return nil }  // trailing bytes
                return EVP_PKCS82PKEY(info)
            }
            guard let made else {
                ERR_clear_error()
                throw CryptoError.badKey("not an unencrypted PKCS#8 private key (DER)")
            }
            try self.init(validating: EVPKey(made))
        }

        /// Imports PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), the key file's content.
        /// - Throws: `CryptoError.badKey` for another label (encrypted or SEC1 keys included), PEM
        ///   headers, or a bad key.
        public convenience init(pemRepresentation pem: some ContiguousBytes) throws {
            let der = try pem.withUnsafeBytes { bytes -> SecretBytes in
                guard !bytes.isEmpty else { throw CryptoError.badKey("no PEM block (empty input)") }
                guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(clamping: bytes.count)) else {
                    throw CryptoError.fromQueue("BIO_new_mem_buf")
                }
                defer { BIO_free(bio) }
                var name: UnsafeMutablePointer<CChar>?
                var header: UnsafeMutablePointer<CChar>?
                var data: UnsafeMutablePointer<UInt8>?
                var length = 0
                let found = PEM_read_bio(bio, &name, &header, &data, &length) == 1
                defer {
                    pulse_OPENSSL_free(name)
                    pulse_OPENSSL_free(header)
                    pulse_OPENSSL_clear_free(data, max(length, 0))
                }
                guard found, let name, let header, let data else {
                    ERR_clear_error()
                    throw CryptoError.badKey("no PEM block")
                }
                guard String(cString: name) == "PRIVATE KEY" else {
                    throw CryptoError.badKey("PEM label is \"\(String(cString: name).prefix(40))\", expected \"PRIVATE KEY\" (unencrypted PKCS#8)")
                }
                guard header.pointee == 0 else { throw CryptoError.badKey("PEM headers are not allowed") }
                return SecretBytes(UnsafeRawBufferPointer(start: data, count: length))
            }
            try self.init(pkcs8DERRepresentation: der)
        }

        /// Checks that `key` is a P-256 key whose private and public halves match.
        private init(validating key: EVPKey) throws {
            guard EVP_PKEY_get_base_id(key.pointer) == EVP_PKEY_EC, key.groupName == "prime256v1" else {
                throw CryptoError.badKey("not a P-256 (prime256v1) key")
            }
            let checker = try key.makeContext()
            defer { EVP_PKEY_CTX_free(checker) }
            guard EVP_PKEY_check(checker) == 1 else {
                ERR_clear_error()
                throw CryptoError.badKey("the private and public key do not match")
            }
            self.key = key
            var point = [UInt8](repeating: 0, count: P256.x963ByteCount)
            var length = 0
            try check(EVP_PKEY_get_octet_string_param(key.pointer, cName("pub"), &point, point.count, &length), "EVP_PKEY_get_octet_string_param(pub)")
            publicKey = try PublicKey(x963Representation: point.prefix(length))
        }

        /// PKCS#8 `PrivateKeyInfo` DER (unencrypted).
        public func pkcs8DERRepresentation() throws -> SecretBytes {
            guard let info = EVP_PKEY2PKCS8(key.pointer) else { throw CryptoError.fromQueue("EVP_PKEY2PKCS8") }
            defer { PKCS8_PRIV_KEY_INFO_free(info) }
            var encoded: UnsafeMutablePointer<UInt8>?
            let length = i2d_PKCS8_PRIV_KEY_INFO(info, &encoded)
            defer { pulse_OPENSSL_clear_free(encoded, Int(max(length, 0))) }
            guard length > 0, let encoded else { throw CryptoError.fromQueue("i2d_PKCS8_PRIV_KEY_INFO") }
            return SecretBytes(UnsafeRawBufferPointer(start: encoded, count: Int(length)))
        }

        /// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), ready for a 0600 key file.
        public func pemRepresentation() throws -> SecretBytes {
            let der = try pkcs8DERRepresentation()
            guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError.fromQueue("BIO_new") }
            defer { BIO_free(bio) }  // a memory BIO wipes its buffer when freed (BUF_MEM_free)
            let written = der.withUnsafeBytes { bytes in
                PEM_write_bio(bio, "PRIVATE KEY", "", bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
            }
            guard written > 0 else { throw CryptoError.fromQueue("PEM_write_bio") }
            var data: UnsafeMutablePointer<CChar>?
            let length = pulse_BIO_get_mem_data(bio, &data)
            guard length > 0, let data else { throw CryptoError.fromQueue("BIO_get_mem_data") }
            return SecretBytes(UnsafeRawBufferPointer(start: data, count: length))
        }

        /// The ES256 signature of `message` (SHA-256, ECDSA with a fresh random nonce), as IEEE P1363
        /// `r‖s` (64 bytes): the form the `X-Pulse-Device` header carries.
        public func signature(for message: some ContiguousBytes) throws -> [UInt8] {
            let digest = SHA256.hash(message)
            let context = try key.makeContext()
            defer { EVP_PKEY_CTX_free(context) }
            try check(EVP_PKEY_sign_init(context), "EVP_PKEY_sign_init")
            try check(EVP_PKEY_CTX_set_signature_md(context, Digests.sha256), "EVP_PKEY_CTX_set_signature_md")
            var der = [UInt8](repeating: 0, count: P256.maxDERSignatureByteCount)
            var length = der.count
            try check(EVP_PKEY_sign(context, &der, &length, digest, digest.count), "EVP_PKEY_sign")
            return try der.withUnsafeBytes { try P256.p1363Signature(der: UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
        }

        public var description: String { "P256.PrivateKey(public: \(publicKey.jwkThumbprint))" }
        public var debugDescription: String { description }
        public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
    }
}
