/// Session and series ids: `[a-z0-9][a-z0-9-]{0,63}`, the shape the packager accepts
/// (docs/session-schema.md). Checked before an id names a folder or a database row.
public enum Identifier {
    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...64).contains(bytes.count), isStart(bytes[0]) else { return false }
        return bytes.dropFirst().allSatisfy { isStart($0) || $0 == UInt8(ascii: "-") }
    }

    /// `0-9a-f`: digests, package ids, listing ids.
    public static func isLowerHex(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
    }

    private static func isStart(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }
}
