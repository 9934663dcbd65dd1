/// Checks over runs of bytes, eight at a time (they run on every request): the "has a byte less than n" and
/// "has a byte equal to v" word tricks, exact for the thresholds used here.
enum ByteClass {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Every byte is visible ASCII, 0x21 to 0x7e (a request-target).
    static func isVisibleASCII(_ bytes: UnsafeRawPointer, _ count: Int) -> Bool {
        var index = 0
        while index + 8 <= count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            // A byte below 0x21, or one of 0x7f and above (adding 1 sets the high bit, or it is set already).
            if (word &- ones &* 0x21) & ~word & highs != 0 || ((word &+ ones) | word) & highs != 0 { return false }
            index += 8
        }
        while index < count {
            let byte = bytes.load(fromByteOffset: index, as: UInt8.self)
            if byte <= 0x20 || byte >= 0x7f { return false }
            index += 1
        }
        return true
    }

    /// No control byte but horizontal tab, and no DEL (RFC 9110 field-value; obs-text bytes are allowed).
    static func isFieldValue(_ bytes: UnsafeRawPointer, _ count: Int) -> Bool {
        var index = 0
        while index + 8 <= count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let below = (word &- ones &* 0x20) & ~word & highs != 0
            let del = word ^ (ones &* 0x7f)
            if below || (del &- ones) & ~del & highs != 0 {
                // Tabs are fine and rare: look at this word byte by byte.
                for offset in 0..<8 where !isFieldByte(bytes.load(fromByteOffset: index + offset, as: UInt8.self)) { return false }
            }
            index += 8
        }
        while index < count {
            if !isFieldByte(bytes.load(fromByteOffset: index, as: UInt8.self)) { return false }
            index += 1
        }
        return true
    }

    @inline(__always)
    private static func isFieldByte(_ byte: UInt8) -> Bool { byte >= 0x20 && byte != 0x7f || byte == 0x09 }
}
