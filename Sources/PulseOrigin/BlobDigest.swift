/// A blob name parsed from its 64 lowercase hex digits: a cheap dictionary key, kept with its text.
struct BlobDigest: Hashable, Sendable {
    let a: UInt64, b: UInt64, c: UInt64, d: UInt64

    /// Parses exactly 64 lowercase hex digits at `bytes[start...]` (to the end); nil for anything else.
    init?(hex bytes: [UInt8], from start: Int) {
        guard bytes.count - start == 64 else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        for word in 0..<4 {
            var value: UInt64 = 0
            for index in (start + word * 16)..<(start + word * 16 + 16) {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case 0x30...0x39: digit = byte - 0x30
                case 0x61...0x66: digit = byte - 0x61 + 10
                default: return nil
                }
                value = value << 4 | UInt64(digit)
            }
            switch word {
            case 0: words.0 = value
            case 1: words.1 = value
            case 2: words.2 = value
            default: words.3 = value
            }
        }
        (a, b, c, d) = words
    }

    /// The 32 digest bytes.
    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for word in [a, b, c, d] {
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return out
    }

    /// The 64 lowercase hex digits.
    var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
