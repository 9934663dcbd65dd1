/// Caps on what the age code reads, so a damaged or hostile file costs bounded memory and work
/// (docs/key-handoff.md, "Limits"). Everything is read whole into memory: these files are key tables
/// and identities, a few hundred kilobytes at most.
public enum AgeLimits {
    /// The largest age file we open (armored or binary) or write: 32 MiB. A key table takes about
    /// 220 bytes per slide, so a 1,000-slide deck seals to about 220 KB, and the cap allows some
    /// 150,000 slides. (16 MiB would do for key tables, but the CCTV vectors that cross the 256th
    /// STREAM chunk are just over 16 MiB, and they must open.)
    public static let maxFileByteCount = 32 << 20
    /// The most recipient stanzas a header may have: 64. Each X25519 stanza costs a key agreement
    /// per identity tried; the key server is sealed to once plus a backup or two.
    public static let maxStanzaCount = 64
    /// The largest identity file we read: 64 KiB (one identity line is 74 bytes; age-keygen writes
    /// about 190 bytes).
    public static let maxIdentityFileByteCount = 64 << 10

    /// "16 MiB (16777216 bytes)"-style wording for error messages.
    public static func describe(_ byteCount: Int) -> String {
        let unit = byteCount >= 1 << 20 ? (byteCount >> 20, "MiB") : (byteCount >> 10, "KiB")
        return "\(unit.0) \(unit.1) (\(byteCount) bytes)"
    }
}
