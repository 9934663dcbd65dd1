import PulseCrypto

/// Making credential texts and turning a presented text into its storage key.
///
/// - Device codes: 12 Crockford base32 characters (60 random bits) shown as `ABCD-EFGH-JKMN`. Typing is
///   forgiving: case, hyphens and spaces do not matter, `O` reads as `0`, `I` and `L` as `1`.
/// - Registration and staff tokens: 32 random bytes, base64url without padding (43 characters).
///
/// The storage key is the SHA-256 of the canonical text. Lookup is by that hash in an index, so the
/// time a lookup takes depends on the hash, never on how much of a guessed token was right.
public enum CredentialSecret {
    static let crockford = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    /// Characters in a device code, without hyphens.
    public static let deviceCodeLength = 12
    /// Characters in a registration or staff token.
    public static let tokenLength = 43

    /// A new device code, grouped for reading: `ABCD-EFGH-JKMN`.
    public static func newDeviceCode() throws -> String {
        let random = try SecureRandom.bytes(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } >> 4  // 60 bits
        var characters: [UInt8] = []
        for index in (0..<deviceCodeLength).reversed() {
            characters.append(crockford[Int((random >> UInt64(index * 5)) & 31)])
            if index % 4 == 0 && index > 0 { characters.append(UInt8(ascii: "-")) }
        }
        return String(decoding: characters, as: UTF8.self)
    }

    /// A new registration or staff token: 32 random bytes, base64url.
    public static func newToken() throws -> String {
        Base64URL.encode(try SecureRandom.bytes(32))
    }

    /// The canonical form of a typed device code (12 characters, uppercase, no hyphens), or nil.
    public static func normalizedDeviceCode(_ text: String) -> String? {
        var out: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "-"), UInt8(ascii: " "): continue
            case UInt8(ascii: "o"), UInt8(ascii: "O"): out.append(UInt8(ascii: "0"))
            case UInt8(ascii: "i"), UInt8(ascii: "I"), UInt8(ascii: "l"), UInt8(ascii: "L"): out.append(UInt8(ascii: "1"))
            default:
                let upper = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte - 32 : byte
                guard crockford.contains(upper) else { return nil }
                out.append(upper)
            }
            if out.count > deviceCodeLength { return nil }
        }
        return out.count == deviceCodeLength ? String(decoding: out, as: UTF8.self) : nil
    }

    /// True when `text` has the shape of a registration or staff token.
    public static func isTokenShaped(_ text: String) -> Bool {
        text.utf8.count == tokenLength && Base64URL.decode(text)?.count == 32
    }

    /// The storage key of a presented credential text; nil when the text cannot be any credential
    /// (then the answer is the same "no" as for an unknown one).
    public static func hash(_ presented: String) -> [UInt8]? {
        if isTokenShaped(presented) { return SHA256.hash(Array(presented.utf8)) }
        if let code = normalizedDeviceCode(presented) { return SHA256.hash(Array(code.utf8)) }
        return nil
    }

    /// The short id of a credential shown in listings: the first 12 hex digits of its hash.
    public static func listingId(hash: [UInt8]) -> String { Hex.encode(hash.prefix(6)) }
}
