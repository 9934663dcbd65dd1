import COpenSSL
import Foundation

/// HMAC-SHA256 (RFC 2104) over libcrypto.
public enum HMACSHA256 {
    /// The 32-byte authentication code of `message` under `key`.
    /// - Throws: `CryptoError.library` when libcrypto fails (in practice only when memory runs out),
    ///   `.invalidParameter` for a key of 2 GiB or more (libcrypto takes its length as an `int`).
    public static func authenticationCode(for message: some ContiguousBytes, key: some ContiguousBytes) throws -> [UInt8] {
        try authenticationCode(for: message, key: key, digest: Digests.sha256)
    }

    /// Checks a code in constant time.
    /// - Throws: as `authenticationCode(for:key:)`; a failure to compute is an error, never a "no".
    public static func isValid(_ code: [UInt8], for message: some ContiguousBytes, key: some ContiguousBytes) throws -> Bool {
        constantTimeEqual(try authenticationCode(for: message, key: key), code)
    }

    /// The code under `digest`; tests pass a digest libcrypto refuses to reach the failure path.
    static func authenticationCode(
        for message: some ContiguousBytes, key: some ContiguousBytes, digest: OpaquePointer?
    ) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: SHA256.byteCount)
        var length: UInt32 = 0
        let result = try key.withUnsafeBytes { keyBytes in
            guard let keyLength = Int32(exactly: keyBytes.count) else {
                throw CryptoError.invalidParameter("HMAC-SHA256 key is \(keyBytes.count) bytes, over libcrypto's limit")
            }
            return message.withUnsafeBytes { messageBytes in
                // A valid pointer even for an empty key or message: HMAC() treats null data as an error.
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1) { dummy in
                    output.withUnsafeMutableBufferPointer { out in
                        HMAC(
                            digest, keyBytes.baseAddress ?? UnsafeRawPointer(dummy.baseAddress!), keyLength,
                            (messageBytes.baseAddress ?? UnsafeRawPointer(dummy.baseAddress!)).assumingMemoryBound(to: UInt8.self),
                            messageBytes.count, out.baseAddress, &length) != nil
                    }
                }
            }
        }
        guard result else { throw CryptoError.fromQueue("HMAC-SHA256") }
        guard length == UInt32(SHA256.byteCount) else {
            throw CryptoError.badLength(what: "HMAC-SHA256 output", expected: SHA256.byteCount, actual: Int(length))
        }
        return output
    }
}
