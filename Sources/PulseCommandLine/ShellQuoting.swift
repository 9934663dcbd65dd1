/// Paths in the commands a tool suggests (`Look at it: cat …`), quoted so that they can be pasted into a
/// POSIX shell as they are.
public enum ShellQuoting {
    /// The argument unchanged when it has only characters a shell leaves alone, else in single quotes
    /// (`'My Talks/pkg'`, an inner `'` written `'\''`).
    public static func quote(_ argument: String) -> String {
        let plain = !argument.isEmpty && argument.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "@%+=:,./_-".unicodeScalars.contains(scalar))
        }
        if plain { return argument }
        return "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
