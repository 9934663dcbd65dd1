import COpenSSL

/// Cryptographically secure random bytes from libcrypto's DRBG.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: count)
        try check(RAND_bytes(&output, Int32(count)), "RAND_bytes")
        return output
    }
}

/// Comparison whose time does not depend on where the inputs differ (tags, tokens, digests).
public func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return a.isEmpty || CRYPTO_memcmp(a, b, a.count) == 0
}
