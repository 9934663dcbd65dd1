import PulseCrypto

/// The key under which a signed POST is recorded against replay: SHA-256 of `r ‖ low-s` of its
/// P1363 signature.
///
/// ECDSA signatures are malleable: if `(r, s)` verifies, so does `(r, n − s)`. Keying on the raw
/// signature bytes would let anyone who saw one request replay it with the other `s`. Normalizing `s`
/// to the lower of the two gives both forms one key.
public enum ReplayKey {
    /// The P-256 group order n, big-endian.
    static let order: [UInt8] = [
        0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51,
    ]

    /// The replay key of a 64-byte P1363 signature (`r ‖ s`); nil for any other length or an `s`
    /// outside [1, n − 1] (such a signature never verifies anyway).
    public static func of(signature: [UInt8]) -> [UInt8]? {
        guard signature.count == 64 else { return nil }
        let r = Array(signature[0..<32])
        var s = Array(signature[32..<64])
        guard s.contains(where: { $0 != 0 }), isLess(s, order) else { return nil }
        let other = subtract(order, s)
        if isLess(other, s) { s = other }
        return SHA256.hash(r + s)
    }

    /// a < b for equal-length big-endian numbers.
    static func isLess(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        for (x, y) in zip(a, b) where x != y { return x < y }
        return false
    }

    /// a − b for equal-length big-endian numbers with a ≥ b.
    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: a.count)
        var borrow = 0
        for index in stride(from: a.count - 1, through: 0, by: -1) {
            var difference = Int(a[index]) - Int(b[index]) - borrow
            borrow = difference < 0 ? 1 : 0
            if difference < 0 { difference += 256 }
            result[index] = UInt8(difference)
        }
        return result
    }
}
