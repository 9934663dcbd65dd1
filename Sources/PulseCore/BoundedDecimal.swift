/// The one parser of decimal numbers in bytes that came from outside: a header (`ts=`, `Range`,
/// `Last-Event-ID`), a query, a command line, an address, a file. Every bound is checked before any
/// arithmetic, so no input can overflow (a Swift overflow traps the whole process: one request would
/// stop every other client), and anything that is not plainly a number is nil, never a guess.
///
/// Accepted: 1 to `maxDigits` ASCII digits and nothing else (no sign, no space, no `_`, no `+`, no
/// fraction). `maxDigits` is at most 18, so every accepted value fits `Int` (and `Int64`) with room to
/// spare; `canonical` also refuses a leading zero (`007`, `00`), so each value has exactly one spelling.
public enum BoundedDecimal {
    /// The most digits any caller may allow: 18 digits always fit a 64-bit integer.
    public static let maxDigits = 18

    /// The value of `digits`, or nil when it is empty, longer than `maxDigits` (at most 18), holds
    /// anything but `0`–`9`, exceeds `maximum`, or (with `canonical`) starts with a `0` and is not `0`.
    @inlinable
    public static func parse<Digits: Collection<UInt8>>(
        _ digits: Digits, maxDigits: Int = BoundedDecimal.maxDigits, maximum: Int = .max, canonical: Bool = false
    ) -> Int? {
        let count = digits.count
        guard count > 0, count <= min(maxDigits, Self.maxDigits) else { return nil }
        if canonical, count > 1, digits.first == 0x30 { return nil }
        var value = 0
        for byte in digits {
            let digit = byte &- 0x30
            guard digit < 10 else { return nil }
            // At most 18 digits: below 10^18, so neither operation can overflow.
            value = value &* 10 &+ Int(digit)
        }
        return value <= maximum ? value : nil
    }

    /// `parse` of a string's UTF-8 bytes.
    @inlinable
    public static func parse(_ text: some StringProtocol, maxDigits: Int = BoundedDecimal.maxDigits, maximum: Int = .max, canonical: Bool = false) -> Int? {
        parse(text.utf8, maxDigits: maxDigits, maximum: maximum, canonical: canonical)
    }
}
