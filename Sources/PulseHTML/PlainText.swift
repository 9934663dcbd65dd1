/// Escaping for plain-text contexts that a person reads: log lines, terminal listings, `text/plain`
/// answers. (HTML pages escape through `Node`; CSV has its own rules and its own function.)
public enum PlainText {
    /// `text` with everything that could change how the surrounding text reads spelled out, so a
    /// device name stays one visible field on one line:
    /// - `\` becomes `\\`, line feed, carriage return and tab become `\n`, `\r`, `\t`;
    /// - other controls (C0, DEL, C1: a terminal's escape sequences), U+2028 and U+2029, and the
    ///   bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A…U+202E, U+2066…U+2069:
    ///   the "Trojan Source" reorderings) and U+FEFF become `\u{…}` with the scalar's hex value.
    ///
    /// Everything else, letters of every script and emoji included, stays as it is. The result is
    /// unambiguous: different strings give different results.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                out.append(scalar)
                continue
            }
            let spelled: String
            switch scalar {
            case "\\": spelled = "\\\\"
            case "\n": spelled = "\\n"
            case "\r": spelled = "\\r"
            case "\t": spelled = "\\t"
            default: spelled = "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
            out.append(contentsOf: spelled.unicodeScalars)
        }
        return String(out)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value >= 0x20 && scalar.value < 0x7F { return scalar == "\\" }
        if scalar.value < 0xA0 { return true }  // C0, DEL, C1
        switch scalar.properties.generalCategory {
        case .lineSeparator, .paragraphSeparator: return true
        default: return scalar.properties.isBidiControl || scalar.value == 0xFEFF
        }
    }
}
