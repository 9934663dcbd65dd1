import COpenSSL
import Foundation

/// HMAC-SHA256 (RFC 2104) over libcrypto.
public enum HMACSHA256 {
    /// The 32-byte authentication code of `message` under `key`.
    public static func authenticationCode(for message: some ContiguousBytes, key: some ContiguousBytes) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: SHA256.byteCount)
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                // A valid pointer even for an empty key or message: HMAC() treats null data as an error.
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1) { dummy in
                    HMAC(
                        EVP_sha256(), keyBytes.baseAddress ?? UnsafeRawPointer(dummy.baseAddress!), Int32(keyBytes.count),
                        (messageBytes.baseAddress ?? UnsafeRawPointer(dummy.baseAddress!)).assumingMemoryBound(to: UInt8.self),
                        messageBytes.count, &output, &length)
                }
            }
        }
        precondition(result != nil && length == 32, "HMAC-SHA256 failed")
        return output
    }

    /// Checks a code in constant time.
    public static func isValid(_ code: [UInt8], for message: some ContiguousBytes, key: some ContiguousBytes) -> Bool {
        constantTimeEqual(authenticationCode(for: message, key: key), code)
    }
}
