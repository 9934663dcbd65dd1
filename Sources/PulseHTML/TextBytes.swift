/// ASCII classes for checking names written in the code.
enum TextBytes {
    static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }
    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    /// A byte of an attribute name: letters, digits, `-` and `:` (`aria-live`, `viewBox`, `xlink:href`).
    static func isNameByte(_ byte: UInt8) -> Bool { isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ":") }
}
