/// Bech32 (BIP 173) without its 90-character limit, as age uses it for recipients and identities.
/// A string is all lowercase or all uppercase; the checksum is computed over the lowercase form.
enum Bech32 {
    private static let charset = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (index, byte) in charset.enumerated() { table[Int(byte)] = Int8(index) }
        return table
    }()
    private static let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]

    enum Failure: Error, Equatable {
        case mixedCase, noSeparator, badCharacter, badChecksum, badPadding, emptyHRP
    }

    /// Encodes `data` under human-readable part `hrp` (lowercase output; uppercase it for identities).
    static func encode(hrp: String, data: [UInt8]) -> String {
        let hrpBytes = Array(hrp.lowercased().utf8)
        let values5 = convertBits(data, from: 8, to: 5, pad: true)!
        let checksum = checksum(hrp: hrpBytes, data: values5)
        let body = (values5 + checksum).map { charset[Int($0)] }
        return String(decoding: hrpBytes + [0x31] + body, as: UTF8.self)
    }

    /// Decodes a Bech32 string into its lowercase human-readable part and its 8-bit data.
    /// `wasUppercase` tells which case the input used.
    static func decode(_ string: String) throws(Failure) -> (hrp: String, data: [UInt8], wasUppercase: Bool) {
        let bytes = Array(string.utf8)
        guard bytes.allSatisfy({ $0 >= 33 && $0 <= 126 }) else { throw .badCharacter }
        let hasLower = bytes.contains { $0 >= 0x61 && $0 <= 0x7a }
        let hasUpper = bytes.contains { $0 >= 0x41 && $0 <= 0x5a }
        guard !(hasLower && hasUpper) else { throw .mixedCase }
        let lower = bytes.map { $0 >= 0x41 && $0 <= 0x5a ? $0 + 0x20 : $0 }
        guard let separator = lower.lastIndex(of: 0x31) else { throw .noSeparator }
        guard separator > 0 else { throw .emptyHRP }
        guard lower.count - separator - 1 >= 6 else { throw .badChecksum }
        let hrp = Array(lower[..<separator])
        var data: [UInt8] = []
        for byte in lower[(separator + 1)...] {
            guard byte < 128, values[Int(byte)] >= 0 else { throw .badCharacter }
            data.append(UInt8(values[Int(byte)]))
        }
        guard polymod(expand(hrp) + data) == 1 else { throw .badChecksum }
        guard let decoded = convertBits(Array(data.dropLast(6)), from: 5, to: 8, pad: false) else { throw .badPadding }
        return (String(decoding: hrp, as: UTF8.self), decoded, hasUpper)
    }

    private static func polymod(_ values: [UInt8]) -> UInt32 {
        var check: UInt32 = 1
        for value in values {
            let top = check >> 25
            check = (check & 0x1ff_ffff) << 5 ^ UInt32(value)
            for bit in 0..<5 where (top >> UInt32(bit)) & 1 == 1 { check ^= generator[bit] }
        }
        return check
    }

    private static func expand(_ hrp: [UInt8]) -> [UInt8] {
        hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 }
    }

    private static func checksum(hrp: [UInt8], data: [UInt8]) -> [UInt8] {
        let mod = polymod(expand(hrp) + data + [0, 0, 0, 0, 0, 0]) ^ 1
        return (0..<6).map { UInt8((mod >> UInt32(5 * (5 - $0))) & 31) }
    }

    /// Regroups bits; without padding, leftover bits must be fewer than `from` and all zero.
    private static func convertBits(_ data: [UInt8], from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var accumulator = 0
        var bits = 0
        var out: [UInt8] = []
        let maxValue = (1 << to) - 1
        for value in data {
            guard Int(value) >> from == 0 else { return nil }
            accumulator = accumulator << from | Int(value)
            bits += from
            while bits >= to {
                bits -= to
                out.append(UInt8((accumulator >> bits) & maxValue))
            }
            accumulator &= (1 << bits) - 1
        }
        if pad {
            if bits > 0 { out.append(UInt8((accumulator << (to - bits)) & maxValue)) }
        } else if bits >= from || (accumulator << (to - bits)) & maxValue != 0 {
            return nil
        }
        return out
    }
}
