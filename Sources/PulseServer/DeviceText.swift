/// Text a device sends that people read: its name, its app build. Enrollment and diag refuse what could
/// disguise it (`hides`), and every text listing and log line writes it through `escaped`, which also makes
/// a quote or a backslash unable to end a quoted field: a name never reads as another line or column
/// (`Ada"  session:talk  revoked` is printed `"Ada\"  session:talk  revoked"`). Devices enrolled before the
/// refusal may still hold such characters; `escaped` shows them as `\u{…}`.
public enum DeviceText {
    /// Characters that change how text around them reads without being seen themselves: control characters
    /// (C0, DEL, C1), the line and paragraph separators U+2028/U+2029, the bidirectional controls (U+061C,
    /// U+200E/U+200F, U+202A–U+202E, U+2066–U+2069: they can reorder a line, the "Trojan Source" trick), and
    /// the invisible U+200B, U+2060 and U+FEFF that make two names look alike.
    static func hides(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x200b, 0x2060, 0xfeff: return true
        default: break
        }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        default: return properties.isBidiControl
        }
    }

    /// A label a device may send (a name, a build): 1 to `maxCharacters` characters (Unicode scalars), none
    /// of which `hides`.
    static func isLabel(_ text: String, maxCharacters: Int) -> Bool {
        let count = text.unicodeScalars.count
        return count >= 1 && count <= maxCharacters && !text.unicodeScalars.contains(where: hides)
    }

    /// `text` for a text listing or a log line: what `hides` written as `\u{XXXX}`, a backslash as `\\`, and
    /// (with `quotes`) a double quote as `\"`, so the text can sit between quotes and end only where they do.
    public static func escaped(_ text: String, quotes: Bool = true) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if hides(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else if scalar == "\\" || (quotes && scalar == "\"") {
                out.unicodeScalars.append("\\")
                out.unicodeScalars.append(scalar)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
