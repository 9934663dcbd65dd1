/// Base64url without padding (RFC 4648 section 5, as JOSE uses it): the `sig=` of `X-Pulse-Device`,
/// the parts of a device certificate, JWK coordinates. Strict decoding (`UnpaddedBase64`): one value has
/// exactly one spelling.
public enum Base64URL {
    /// The unpadded base64url text of `bytes`.
    public static func encode(_ bytes: some Collection<UInt8>) -> String { UnpaddedBase64.url.encode(bytes) }

    /// The unpadded base64url of `bytes`, as ASCII bytes.
    @inlinable public static func encodeBytes(_ bytes: some Collection<UInt8>) -> [UInt8] { UnpaddedBase64.url.encodeBytes(bytes) }

    /// The bytes of canonical unpadded base64url text; nil for anything else.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? { UnpaddedBase64.url.decode(text) }

    /// The bytes of canonical unpadded base64url given as ASCII bytes; nil for anything else.
    @inlinable public static func decode(bytes input: some Collection<UInt8>) -> [UInt8]? { UnpaddedBase64.url.decode(bytes: input) }
}
