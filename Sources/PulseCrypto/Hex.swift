/// Lowercase hexadecimal, as used for blob names.
public enum Hex {
    // The per-blob helpers are @inlinable: called generically across modules they ran unspecialized,
    // 20 K instructions to check one 64-character name.

    /// Lowercase hex of `bytes`.
    @inlinable
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digit(byte >> 4))
            out.append(digit(byte & 0x0f))
        }
        return String(decoding: out, as: UTF8.self)
    }

    @inlinable
    static func digit(_ value: UInt8) -> UInt8 { value < 10 ? 0x30 + value : 0x61 + value - 10 }

    /// Bytes of a hex string (either case); nil if it is not hex of whole bytes.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// True when `text` is exactly 64 lowercase hex digits: the only valid blob name.
    @inlinable
    public static func isDigestName(_ text: some StringProtocol) -> Bool {
        var count = 0
        for byte in text.utf8 {
            guard (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) else { return false }
            count += 1
        }
        return count == 64
    }

    /// The value of one hex digit (either case), or nil.
    public static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x61...0x66: byte - 0x61 + 10
        case 0x41...0x46: byte - 0x41 + 10
        default: nil
        }
    }
}
