import PulseCrypto

/// Base64 as age uses it: the standard alphabet (RFC 4648 section 4) without `=` padding, and only the
/// canonical encoding is accepted (unused trailing bits must be zero): `UnpaddedBase64.standard`.
enum AgeBase64 {
    /// True for the 64 characters of the alphabet.
    static func isAlphabet(_ byte: UInt8) -> Bool { UnpaddedBase64.standard.isAlphabet(byte) }

    /// Unpadded base64 of `bytes`.
    static func encode(_ bytes: some Collection<UInt8>) -> String { UnpaddedBase64.standard.encode(bytes) }

    static func encodeBytes(_ bytes: [UInt8]) -> [UInt8] { UnpaddedBase64.standard.encodeBytes(bytes) }

    /// The bytes of canonical unpadded base64; nil for padding, other characters, or non-zero unused bits.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? { UnpaddedBase64.standard.decode(bytes: text) }

    static func decode(_ text: String) -> [UInt8]? { decode(Array(text.utf8)) }
}
