import COpenSSL
import Foundation

/// HKDF with SHA-256 (RFC 5869), extract then expand.
public enum HKDF {
    /// Derives `count` bytes from input key material (an array or `SecretBytes`), a salt and context info.
    /// - Throws: `.invalidParameter` when `count` is 0 or over 255 × 32 bytes.
    public static func sha256(
        inputKeyMaterial ikm: some ContiguousBytes, salt: [UInt8], info: [UInt8], count: Int
    ) throws -> [UInt8] {
        guard count > 0, count <= 255 * SHA256.byteCount else {
            throw CryptoError.invalidParameter("HKDF-SHA256 output must be 1 to \(255 * SHA256.byteCount) bytes, asked \(count)")
        }
        guard let context = EVP_KDF_CTX_new(KDFs.hkdf) else { throw CryptoError.fromQueue("EVP_KDF_CTX_new") }
        defer { EVP_KDF_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: count)
        let result = ikm.withUnsafeBytes { ikm in
            withHKDFParameters(ikm: ikm, salt: salt, info: info) { parameters in
                EVP_KDF_derive(context, &output, count, parameters)
            }
        }
        try check(result, "HKDF-SHA256")
        return output
    }

    private static func withHKDFParameters(
        ikm: UnsafeRawBufferPointer, salt: [UInt8], info: [UInt8], _ body: (UnsafePointer<OSSL_PARAM>) -> Int32
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
    private static func withNonNullBytes<R>(
        _ bytes: [UInt8], _ body: ((pointer: UnsafeMutableRawPointer, count: Int)) -> R
    ) -> R {
        bytes.withUnsafeBytes { withNonNullBytes($0, body) }
    }

    /// The same for a raw buffer (key material is read in place, never copied).
    private static func withNonNullBytes<R>(
        _ bytes: UnsafeRawBufferPointer, _ body: ((pointer: UnsafeMutableRawPointer, count: Int)) -> R
    ) -> R {
        if let base = bytes.baseAddress, bytes.count > 0 { return body((UnsafeMutableRawPointer(mutating: base), bytes.count)) }
        return withUnsafeTemporaryAllocation(byteCount: 1, alignment: 1) { body(($0.baseAddress!, 0)) }
    }
}

enum KDFs {
    nonisolated(unsafe) static let hkdf: OpaquePointer = {
        guard let kdf = EVP_KDF_fetch(nil, "HKDF", nil) else { fatalError("libcrypto has no HKDF") }
        return kdf
    }()
}
