import COpenSSL
import Foundation

/// HKDF with SHA-256 (RFC 5869), extract then expand.
public enum HKDF {
    /// Derives `count` bytes from input key material, a salt and context info.
    /// - Throws: `.invalidParameter` when `count` is 0 or over 255 × 32 bytes.
    public static func sha256(
        inputKeyMaterial ikm: some ContiguousBytes, salt: [UInt8], info: [UInt8], count: Int
    ) throws -> [UInt8] {
        try checkCount(count)
        var output = [UInt8](repeating: 0, count: count)
        try output.withUnsafeMutableBytes { try derive(ikm: ikm, salt: salt, info: info, into: $0) }
        return output
    }

    /// Derives `count` bytes from a secret, straight into a secret: neither the key material nor the
    /// output is ever copied into memory that is not wiped.
    public static func sha256(secret: SecretBytes, salt: [UInt8], info: [UInt8], count: Int) throws -> SecretBytes {
        try checkCount(count)
        return try SecretBytes(count: count) { try derive(ikm: secret, salt: salt, info: info, into: $0) }
    }

    private static func checkCount(_ count: Int) throws {
        guard count > 0, count <= 255 * SHA256.byteCount else {
            throw CryptoError.invalidParameter("HKDF-SHA256 output must be 1 to \(255 * SHA256.byteCount) bytes, asked \(count)")
        }
    }

    private static func derive(
        ikm: some ContiguousBytes, salt: [UInt8], info: [UInt8], into output: UnsafeMutableRawBufferPointer
    ) throws {
        guard let context = EVP_KDF_CTX_new(KDFs.hkdf) else { throw CryptoError.fromQueue("EVP_KDF_CTX_new") }
        defer { EVP_KDF_CTX_free(context) }
        let result = withHKDFParameters(ikm: ikm, salt: salt, info: info) { parameters in
            EVP_KDF_derive(context, output.baseAddress!.assumingMemoryBound(to: UInt8.self), output.count, parameters)
        }
        try check(result, "HKDF-SHA256")
    }

    private static func withHKDFParameters(
        ikm: some ContiguousBytes, salt: [UInt8], info: [UInt8], _ body: (UnsafePointer<OSSL_PARAM>) -> Int32
    ) -> Int32 {
        "SHA256".withCString { digestName in
            withNonNullBytes(ikm) { ikm in
                withNonNullBytes(salt) { salt in
                    withNonNullBytes(info) { info in
                        // OSSL_PARAM keeps the name pointers: they must outlive the call, so static strings.
                        let parameters = [
                            OSSL_PARAM_construct_utf8_string(name("digest"), UnsafeMutablePointer(mutating: digestName), 0),
                            OSSL_PARAM_construct_octet_string(name("key"), ikm.pointer, ikm.count),
                            OSSL_PARAM_construct_octet_string(name("salt"), salt.pointer, salt.count),
                            OSSL_PARAM_construct_octet_string(name("info"), info.pointer, info.count),
                            OSSL_PARAM_construct_end(),
                        ]
                        return parameters.withUnsafeBufferPointer { body($0.baseAddress!) }
                    }
                }
            }
        }
    }

    private static func name(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// OpenSSL treats a null octet string as "not set": an empty input gets a valid pointer and length 0.
    /// The bytes are read in place (libcrypto only reads them), never copied: key material stays where it is.
    private static func withNonNullBytes<R>(
        _ bytes: some ContiguousBytes, _ body: ((pointer: UnsafeMutableRawPointer, count: Int)) -> R
    ) -> R {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else {
                var placeholder: UInt8 = 0
                return withUnsafeMutableBytes(of: &placeholder) { body(($0.baseAddress!, 0)) }
            }
            return body((UnsafeMutableRawPointer(mutating: base), buffer.count))
        }
    }
}

enum KDFs {
    nonisolated(unsafe) static let hkdf: OpaquePointer = {
        guard let kdf = EVP_KDF_fetch(nil, "HKDF", nil) else { fatalError("libcrypto has no HKDF") }
        return kdf
    }()
}
