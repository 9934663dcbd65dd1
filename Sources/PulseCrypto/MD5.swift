import COpenSSL
import Foundation

/// MD5 over libcrypto, for S3's `Content-MD5` header and single-part ETags only: a check that the bytes
/// a store received are the bytes that were sent. Broken as a cryptographic hash; never use it for names,
/// signatures or anything an attacker chooses.
public enum MD5 {
    /// Byte length of a digest.
    public static let byteCount = 16

    /// The digest of `data`.
    public static func hash(_ data: some ContiguousBytes) -> [UInt8] {
        data.withUnsafeBytes { buffer in
            var digest = [UInt8](repeating: 0, count: byteCount)
            var length: UInt32 = 0
            let ok = digest.withUnsafeMutableBufferPointer { out in
                EVP_Digest(buffer.baseAddress, buffer.count, out.baseAddress, &length, algorithm, nil)
            }
            precondition(ok == 1 && length == 16, "EVP_Digest(MD5) failed")
            return digest
        }
    }

    /// Fetched once, like SHA-256 (`Digests`).
    nonisolated(unsafe) private static let algorithm: OpaquePointer = {
        guard let md = EVP_MD_fetch(nil, "MD5", nil) else { fatalError("libcrypto has no MD5") }
        return md
    }()
}
