/// One Unicode scalar read from UTF-8 bytes, strictly (Unicode Table 3-7: no overlong forms, no surrogates,
/// nothing past U+10FFFF): the JSON parser's check and the log lines' escaping read bytes the same way.
public enum UTF8Scalar {
    /// The scalar of the well-formed UTF-8 sequence (Unicode table 3-7) starting at `index`, and its length;
    /// nil when the bytes there are not one.
    @inlinable
    public static func decode<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at index: Int) -> (UInt32, Int)? where Bytes.Index == Int {
        let lead = bytes[index]
        let length: Int
        var lower: UInt8 = 0x80, upper: UInt8 = 0xbf
        switch lead {
        case 0xc2...0xdf: length = 2
        case 0xe0: length = 3; lower = 0xa0
        case 0xe1...0xec, 0xee...0xef: length = 3
        case 0xed: length = 3; upper = 0x9f
        case 0xf0: length = 4; lower = 0x90
        case 0xf1...0xf3: length = 4
        case 0xf4: length = 4; upper = 0x8f
        default: return nil
        }
        guard bytes.endIndex - index >= length else { return nil }
        let second = bytes[index + 1]
        guard second >= lower && second <= upper else { return nil }
        var scalar = UInt32(lead) & (length == 2 ? 0x1f : length == 3 ? 0x0f : 0x07)
        scalar = scalar << 6 | UInt32(second & 0x3f)
        for offset in 2..<length {
            let next = bytes[index + offset]
            guard next & 0xc0 == 0x80 else { return nil }
            scalar = scalar << 6 | UInt32(next & 0x3f)
        }
        return (scalar, length)
    }
}
