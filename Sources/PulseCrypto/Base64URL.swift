/// Base64url without padding (RFC 4648 section 5, as JOSE uses it): the `sig=` of `X-Pulse-Device`,
/// the parts of a device certificate, JWK coordinates.
///
/// Decoding is strict, so that one value has exactly one spelling: no `=` padding, no characters
/// outside `A–Z a–z 0–9 - _` (no whitespace, no `+` or `/`), no length of the form 4k+1, and the
/// unused low bits of the last character must be zero.
public enum Base64URL {
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// 0xff for bytes outside the alphabet.
    static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xff, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// The unpadded base64url text of `bytes`.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: encodeBytes(bytes), as: UTF8.self)
    }

    /// The unpadded base64url of `bytes`, as ASCII bytes.
    public static func encodeBytes(_ bytes: some Collection<UInt8>) -> [UInt8] {
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let n = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            out.append(alphabet[Int(n & 63)])
            index += 3
        }
        let rest = input.count - index
        if rest > 0 {
            let n = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            if rest == 2 { out.append(alphabet[Int(n >> 6 & 63)]) }
        }
        return out
    }

    /// The bytes of canonical unpadded base64url text; nil for anything else.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var text = String(text)
        return text.withUTF8 { decode(bytes: $0) }
    }

    /// The bytes of canonical unpadded base64url given as ASCII bytes; nil for anything else.
    public static func decode(bytes input: some Collection<UInt8>) -> [UInt8]? {
        guard input.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in input {
            let value = values[Int(byte)]
            guard value != 0xff else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // Leftover bits (2 or 4) must be zero, or another text would decode to the same bytes.
        guard accumulator == 0 else { return nil }
        return out
    }
}
