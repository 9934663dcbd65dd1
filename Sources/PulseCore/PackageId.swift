import PulseCrypto

/// A package's random id: 16 bytes from the DRBG as 32 lowercase hex digits. It is bound into every slide
/// key (docs/crypto.md), names the default secret file, and lets push refuse a target holding another package.
public enum PackageId {
    public static let byteCount = 16

    /// A new random id.
    public static func random() throws -> String { Hex.encode(try SecureRandom.bytes(byteCount)) }

    /// Exactly 32 lowercase hex digits.
    public static func isValid(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 2 * byteCount && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// The 16 raw bytes of a valid id (what the key derivation binds), nil otherwise.
    public static func bytes(_ text: some StringProtocol) -> [UInt8]? { isValid(text) ? Hex.decode(text) : nil }
}
