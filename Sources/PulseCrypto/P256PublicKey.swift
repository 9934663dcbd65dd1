import COpenSSL
import Foundation
import Synchronization

extension P256 {
    /// A validated P-256 public key. Parse it once and keep it (the server caches one per device):
    /// it owns its EVP_PKEY and a few ready verification contexts, so a verify allocates little.
    ///
    /// What import accepts (docs/es256.md):
    /// - SubjectPublicKeyInfo DER with `id-ecPublicKey` and the named curve `prime256v1`, exactly as
    ///   DER encodes it (no BER lengths, no explicit curve parameters, nothing after it);
    /// - the point uncompressed (`04‖x‖y`, what iOS and Android export) or compressed (`02`/`03‖x`;
    ///   libcrypto decompresses it and refuses an x with no point); never the hybrid form or the
    ///   point at infinity;
    /// - then libcrypto's full public-key check (`EVP_PKEY_public_check`): on the curve, not
    ///   infinity, in the prime-order group.
    public final class PublicKey: Sendable, Equatable, CustomStringConvertible {
        let key: EVPKey
        /// The uncompressed point `04‖x‖y`, whatever form was imported.
        public let x963Representation: [UInt8]
        /// Verification contexts ready for `EVP_PKEY_verify`, reused across calls and threads.
        private let contexts = Mutex<[VerifyContext]>([])
        private static let maxPooledContexts = 16

        /// Imports SubjectPublicKeyInfo DER (the `publicKey` of an enrollment).
        /// - Throws: `CryptoError.badKey` saying which rule failed.
        public convenience init(derRepresentation der: some ContiguousBytes) throws {
            let bytes = der.withUnsafeBytes { Array($0) }
            let point: ArraySlice<UInt8>
            if bytes.count == P256.spkiPrefixUncompressed.count + P256.x963ByteCount, bytes.starts(with: P256.spkiPrefixUncompressed) {
                point = bytes[P256.spkiPrefixUncompressed.count...]
            } else if bytes.count == P256.spkiPrefixCompressed.count + 33, bytes.starts(with: P256.spkiPrefixCompressed) {
                point = bytes[P256.spkiPrefixCompressed.count...]
            } else {
                throw CryptoError.badKey("not a DER SubjectPublicKeyInfo of a P-256 (prime256v1) key with a named curve")
            }
            try self.init(x963Representation: point)
        }

        /// Imports an X9.63 point: 65 bytes `04‖x‖y`, or 33 bytes `02‖x` / `03‖x`.
        /// - Throws: `CryptoError.badKey` saying which rule failed.
        public init(x963Representation point: some ContiguousBytes) throws {
            let bytes = point.withUnsafeBytes { Array($0) }
            switch (bytes.count, bytes.first) {
            case (P256.x963ByteCount, 0x04), (33, 0x02), (33, 0x03): break
            default: throw CryptoError.badKey("not an uncompressed (65-byte, 04…) or compressed (33-byte, 02…/03…) P-256 point")
            }
            key = try Self.makeKey(point: bytes)
            x963Representation = try Self.uncompressedPoint(of: key)
            // Also parses the key's algorithm once and warms the pool.
            let context = VerifyContext(pointer: try makeVerifyContext())
            contexts.withLock { $0.append(context) }
        }

        deinit {
            contexts.withLock { pool in
                for context in pool { EVP_PKEY_CTX_free(context.pointer) }
            }
        }

        /// SubjectPublicKeyInfo DER with the uncompressed point (91 bytes).
        public var derRepresentation: [UInt8] { P256.spkiPrefixUncompressed + x963Representation }

        /// The big-endian x coordinate.
        public var x: [UInt8] { Array(x963Representation[1...32]) }
        /// The big-endian y coordinate.
        public var y: [UInt8] { Array(x963Representation[33...64]) }

        public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool {
            lhs.x963Representation == rhs.x963Representation
        }

        public var description: String { "P256.PublicKey(\(jwkThumbprint))" }

        // MARK: verifying

        /// True if `signature` is a valid ES256 signature (IEEE P1363 `r‖s`, 64 bytes) of `message`.
        /// Any other length, `r` or `s` outside [1, n-1], or a libcrypto failure is false.
        public func isValidSignature(_ signature: some ContiguousBytes, for message: some ContiguousBytes) -> Bool {
            guard let der = signature.withUnsafeBytes({ P256.derSignature(p1363: $0) }) else { return false }
            return verify(der: der, digest: SHA256.hash(message))
        }

        /// True if `signature` is a valid DER `ECDSA-Sig-Value` over SHA-256 of `message`. libcrypto
        /// refuses BER and trailing bytes (it re-encodes and compares).
        public func isValidDERSignature(_ signature: some ContiguousBytes, for message: some ContiguousBytes) -> Bool {
            let der = signature.withUnsafeBytes { Array($0) }
            guard !der.isEmpty, der.count <= P256.maxDERSignatureByteCount else { return false }
            return verify(der: der, digest: SHA256.hash(message))
        }

        private func verify(der: [UInt8], digest: [UInt8]) -> Bool {
            let context: OpaquePointer
            if let pooled = contexts.withLock({ $0.popLast() }) {
                context = pooled.pointer
            } else if let fresh = try? makeVerifyContext() {
                context = fresh
            } else {
                ERR_clear_error()
                return false
            }
            let result = EVP_PKEY_verify(context, der, der.count, digest, digest.count)
            if result != 1 { ERR_clear_error() }
            // 1 and 0 leave the context as it was; anything else is an error: do not reuse it.
            let keep = result == 1 || result == 0
            let pooled = keep && contexts.withLock { pool in
                guard pool.count < Self.maxPooledContexts else { return false }
                pool.append(VerifyContext(pointer: context))
                return true
            }
            if !pooled { EVP_PKEY_CTX_free(context) }
            return result == 1
        }

        private func makeVerifyContext() throws -> OpaquePointer {
            let context = try key.makeContext()
            do {
                try check(EVP_PKEY_verify_init(context), "EVP_PKEY_verify_init")
                try check(EVP_PKEY_CTX_set_signature_md(context, Digests.sha256), "EVP_PKEY_CTX_set_signature_md")
            } catch {
                EVP_PKEY_CTX_free(context)
                throw error
            }
            return context
        }

        // MARK: import

        /// An EVP_PKEY for `point` on prime256v1, after libcrypto's full public-key check.
        private static func makeKey(point: [UInt8]) throws -> EVPKey {
            guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw CryptoError.fromQueue("EVP_PKEY_CTX_new_from_name(EC)") }
            defer { EVP_PKEY_CTX_free(context) }
            try check(EVP_PKEY_fromdata_init(context), "EVP_PKEY_fromdata_init")
            var made: OpaquePointer?
            let result = "prime256v1".withCString { group in
                point.withUnsafeBytes { bytes in
                    let parameters = [
                        OSSL_PARAM_construct_utf8_string(cName("group"), UnsafeMutablePointer(mutating: group), 0),
                        OSSL_PARAM_construct_octet_string(cName("pub"), UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count),
                        OSSL_PARAM_construct_end(),
                    ]
                    return parameters.withUnsafeBufferPointer { list in
                        EVP_PKEY_fromdata(context, &made, pulse_EVP_PKEY_PUBLIC_KEY(), UnsafeMutablePointer(mutating: list.baseAddress))
                    }
                }
            }
            guard result == 1, let made else {
                ERR_clear_error()
                throw CryptoError.badKey("the point is not on P-256")
            }
            let key = EVPKey(made)
            let checker = try key.makeContext()
            defer { EVP_PKEY_CTX_free(checker) }
            guard EVP_PKEY_public_check(checker) == 1 else {
                ERR_clear_error()
                throw CryptoError.badKey("the point fails the P-256 public key check")
            }
            return key
        }

        /// `04‖x‖y` read back from the key (a compressed import is decompressed here).
        private static func uncompressedPoint(of key: EVPKey) throws -> [UInt8] {
            var point = [UInt8](repeating: 0x04, count: P256.x963ByteCount)
            for (name, offset) in [(cName("qx"), 1), (cName("qy"), 33)] {
                var number: OpaquePointer?
                try check(EVP_PKEY_get_bn_param(key.pointer, name, &number), "EVP_PKEY_get_bn_param")
                defer { BN_free(number) }
                let written = point.withUnsafeMutableBufferPointer { buffer in
                    BN_bn2binpad(number, buffer.baseAddress! + offset, Int32(P256.coordinateByteCount))
                }
                guard written == Int32(P256.coordinateByteCount) else { throw CryptoError.badKey("a coordinate is over 32 bytes") }
            }
            return point
        }
    }
}

/// An EVP_PKEY_CTX set up for verification, owned by the pool of one key; only one thread uses it at
/// a time (it is taken out of the pool for the call).
// @unchecked: an EVP_PKEY_CTX, used by one thread at a time (taken out of the pool for the call).
private struct VerifyContext: @unchecked Sendable {
    let pointer: OpaquePointer
}
