/// The shape a string field must have (an id, a colour, a time), checked byte by byte.
///
/// Input formats are fixed and simple, so a hand-written check is exact and quick; compiling the same
/// shapes as ICU regular expressions took longer than reading a whole session file.
public struct TextFormat: Sendable {
    private let check: @Sendable (inout TextScanner) -> Bool

    /// `check` consumes the string from the start; it matches if `check` holds and nothing is left.
    public init(_ check: @escaping @Sendable (inout TextScanner) -> Bool) {
        self.check = check
    }

    public func matches(_ text: String) -> Bool {
        var scanner = TextScanner(text)
        return check(&scanner) && scanner.atEnd
    }
}

/// Reads a string's UTF-8 bytes from the start; each method consumes what it accepts.
public struct TextScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ text: String) { bytes = Array(text.utf8) }

    public var atEnd: Bool { index == bytes.count }

    /// Consumes the next byte if it is `character` (ASCII).
    public mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
        index += 1
        return true
    }

    /// Consumes up to `limit` bytes for which `accept` holds; returns how many.
    public mutating func many(upTo limit: Int = .max, _ accept: (UInt8) -> Bool) -> Int {
        var count = 0
        while count < limit, index < bytes.count, accept(bytes[index]) {
            index += 1
            count += 1
        }
        return count
    }

    /// Consumes exactly `count` ASCII digits.
    public mutating func digits(_ count: Int) -> Bool { many(upTo: count, Self.isDigit) == count }

    /// Consumes exactly `count` ASCII digits whose value is at most `maximum`.
    public mutating func number(digits count: Int, atMost maximum: Int) -> Bool {
        let start = index
        guard digits(count) else { return false }
        return BoundedDecimal.parse(bytes[start..<index], maximum: maximum) != nil
    }

    public static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    public static func isLowercaseLetter(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
    public static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
    }
}
