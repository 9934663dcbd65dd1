/// The one escaping function of HTML pages: every text node and every attribute value goes through
/// `appendEscaped`, so what a device sends (a name, a platform, a build) can only ever be text.
///
/// The same rules serve text and double-quoted attribute values, so a value is safe wherever the
/// builder puts it:
/// - `&` `<` `>` `"` `'` become `&amp;` `&lt;` `&gt;` `&quot;` `&#39;`;
/// - U+2028 and U+2029 become `&#x2028;` and `&#x2029;` (harmless in HTML, line breaks in JavaScript,
///   so a value copied into a script or a JSON island stays one line);
/// - C0 controls other than tab, line feed and carriage return, DEL and the C1 controls become U+FFFD
///   (the parse errors of the HTML standard's "control character in input stream"; invisible on a page,
///   terminal escapes when the page is saved and printed).
///
/// A Swift `String` is valid Unicode already: bytes that were not UTF-8 became U+FFFD when the string
/// was made (`String(decoding:as:)`), and `Node.text(utf8:)` does the same for raw bytes.
enum Escaping {
    /// Bytes 0x00…0x3F that need escaping, one bit each: the controls other than tab, line feed and
    /// carriage return (0xFFFFD9FF), and `"` `&` `'` `<` `>` (bits 34, 38, 39, 60, 62). A literal, so
    /// reading it costs no lazy initialisation (the tests check every byte's class).
    private static let low: UInt64 = 0x5000_00C4_FFFF_D9FF

    /// Whether `byte` may start something to escape: `low`'s bytes, DEL, and the lead bytes of the C1
    /// controls (0xC2) and of U+2028/U+2029 (0xE2), which the slow path looks at closely.
    @inline(__always)
    private static func mayNeedEscape(_ byte: UInt8, low: UInt64) -> Bool {
        byte < 0x40 ? low & (1 << UInt64(byte)) != 0 : (byte == 0x7F || byte == 0xC2 || byte == 0xE2)
    }

    private static let ampersand = Array("&amp;".utf8), lessThan = Array("&lt;".utf8), greaterThan = Array("&gt;".utf8)
    private static let quote = Array("&quot;".utf8), apostrophe = Array("&#39;".utf8)
    private static let lineSeparator = Array("&#x2028;".utf8), paragraphSeparator = Array("&#x2029;".utf8)
    private static let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]

    /// Appends `text` to `out`, escaped for HTML text and attribute values.
    static func appendEscaped(_ text: String, to out: inout [UInt8]) {
        // A Span: bounds-checked like an array, as fast as a pointer (a UTF8View's generic iteration
        // cost 25 instructions a byte).
        let bytes = text.utf8.span
        let low = Self.low
        var first = 0
        while first < bytes.count, !mayNeedEscape(bytes[first], low: low) { first += 1 }
        // The usual case, a name or a number with nothing to escape: one scan, one copy.
        guard first < bytes.count else {
            out += text.utf8
            return
        }
        var index = first
        var copied = 0  // bytes[copied..<index] are still to be copied as they are
        while index < bytes.count {
            let byte = bytes[index]
            var replacement: [UInt8]? = nil
            var length = 1
            switch byte {
            case UInt8(ascii: "&"): replacement = ampersand
            case UInt8(ascii: "<"): replacement = lessThan
            case UInt8(ascii: ">"): replacement = greaterThan
            case UInt8(ascii: "\""): replacement = quote
            case UInt8(ascii: "'"): replacement = apostrophe
            case 0x09, 0x0A, 0x0D: break
            case 0x00..<0x20, 0x7F: replacement = Self.replacement
            case 0xC2:
                // Valid UTF-8, so a lead byte is followed by its continuation bytes.
                if index + 1 < bytes.count, (0x80...0x9F).contains(bytes[index + 1]) {
                    replacement = Self.replacement  // U+0080…U+009F
                    length = 2
                }
            case 0xE2:
                if index + 2 < bytes.count, bytes[index + 1] == 0x80, bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9 {
                    replacement = bytes[index + 2] == 0xA8 ? lineSeparator : paragraphSeparator
                    length = 3
                }
            default: break
            }
            if let replacement {
                for position in copied..<index { out.append(bytes[position]) }
                out += replacement
                index += length
                copied = index
            } else {
                index += 1
            }
        }
        for position in copied..<index { out.append(bytes[position]) }
    }
}
