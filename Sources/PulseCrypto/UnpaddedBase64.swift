/// Base64 without `=` padding, decoded strictly so that one value has exactly one spelling: no padding,
/// no character outside the alphabet (no whitespace), no length of the form 4k+1, and the unused low
/// bits of the last character must be zero. One codec, two alphabets: `url` (RFC 4648 section 5, as JOSE
/// and `X-Pulse-Device` use it) and `standard` (section 4, as the age format uses it).
public struct UnpaddedBase64: Sendable {
    /// `A–Z a–z 0–9 - _`
    public static let url = UnpaddedBase64("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    /// `A–Z a–z 0–9 + /`
    public static let standard = UnpaddedBase64("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")

    @usableFromInline let alphabet: [UInt8]
    /// The value of each byte, 0xff for bytes outside the alphabet.
    @usableFromInline let values: [UInt8]

    private init(_ characters: String) {
        alphabet = Array(characters.utf8)
        var table = [UInt8](repeating: 0xff, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        values = table
    }

    /// True for the 64 characters of the alphabet.
    @inlinable public func isAlphabet(_ byte: UInt8) -> Bool { values[Int(byte)] != 0xff }

    /// The unpadded text of `bytes`.
    public func encode(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: encodeBytes(bytes), as: UTF8.self)
    }

    /// The unpadded text of `bytes`, as ASCII bytes.
    @inlinable public func encodeBytes(_ bytes: some Collection<UInt8>) -> [UInt8] {
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

    /// The bytes of canonical unpadded text; nil for anything else.
    public func decode(_ text: some StringProtocol) -> [UInt8]? {
        var text = String(text)
        return text.withUTF8 { decode(bytes: $0) }
    }

    /// The bytes of canonical unpadded text given as ASCII bytes; nil for anything else.
    /// Inlinable: callers in other modules get it specialized for their collection type.
    @inlinable public func decode(bytes input: some Collection<UInt8>) -> [UInt8]? {
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
