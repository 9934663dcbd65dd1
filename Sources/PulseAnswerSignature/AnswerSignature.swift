import PulseCore
import PulseCrypto

/// The `Pulse-Signature` of a sync answer: a JWS compact serialization with a detached payload (RFC 7515
/// appendix F), `b64url(protected) ".." b64url(sig)`. The signing input is
/// `b64url(protected) "." b64url(body)` over the exact body bytes (empty for a 304); `sig` is ES256 in
/// IEEE P1363 form (`r‖s`, 64 bytes), as the device certificate's; the protected header is canonical
/// JSON (`JSONValue.canonicalBytes`), so one set of claims has one header.
public enum AnswerSignature {
    /// The response header that carries the signature.
    public static let headerName = "Pulse-Signature"
    /// `alg` of every answer signature.
    public static let algorithm = "ES256"
    /// `typ` of every answer signature.
    public static let type = "pulse-answer"
    /// The longest `Pulse-Signature` value accepted (bytes): bounds the work of parsing hostile input.
    public static let maxHeaderByteCount = 4096

    /// The `Pulse-Signature` value for `body` with `claims`, signed by `key` (whose thumbprint is the `kid`).
    public static func sign(body: some Collection<UInt8>, claims: AnswerClaims, key: P256.PrivateKey) throws -> String {
        let protected = Base64URL.encodeBytes(claims.protectedHeader(kid: key.publicKey.jwkThumbprint).canonicalBytes)
        var input = protected
        input.append(UInt8(ascii: "."))
        input.append(contentsOf: Base64URL.encodeBytes(body))
        let signature = try key.signature(for: input)
        return String(decoding: protected, as: UTF8.self) + ".." + Base64URL.encode(signature)
    }

    /// The claims of `header` when it is a well-formed signature of `body` by one of `keys`.
    /// Unknown members of the protected header are ignored; binding the claims to the request (route,
    /// query, device, status, versions) and to time is the caller's.
    /// - Throws: `AnswerSignatureError.malformed`, `.unknownKey` or `.badSignature`.
    public static func verify(header: String, body: some Collection<UInt8>, keys: [AnswerKey]) throws(AnswerSignatureError) -> AnswerClaims {
        let bytes = Array(header.utf8)
        guard bytes.count <= maxHeaderByteCount else { throw .malformed("longer than \(maxHeaderByteCount) bytes") }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1].isEmpty else {
            throw .malformed("not a detached compact JWS (protected..signature)")
        }
        guard let protectedBytes = Base64URL.decode(bytes: parts[0]) else { throw .malformed("the protected header is not unpadded base64url") }
        guard let signature = Base64URL.decode(bytes: parts[2]) else { throw .malformed("the signature is not unpadded base64url") }
        guard signature.count == P256.signatureByteCount else { throw .malformed("the signature is not 64 bytes (ES256 r||s)") }
        let parsed: JSONValue
        do { parsed = try JSONValue.parse(protectedBytes) } catch { throw .malformed("the protected header is not JSON") }
        guard parsed.canonicalBytes == protectedBytes else { throw .malformed("the protected header is not canonical JSON") }
        var claims = try AnswerClaims(protectedHeader: parsed)
        let kid = claims.kid ?? ""
        guard let key = keys.first(where: { $0.kid == kid }) else { throw .unknownKey(kid: kid) }
        var input = Array(parts[0])
        input.append(UInt8(ascii: "."))
        input.append(contentsOf: Base64URL.encodeBytes(body))
        guard key.publicKey.isValidSignature(signature, for: input) else { throw .badSignature(kid: kid) }
        claims.kid = kid
        return claims
    }

    /// True for what a key id looks like: an RFC 7638 SHA-256 thumbprint, 43 base64url characters.
    static func isKeyId(_ text: String) -> Bool {
        text.utf8.count == 43 && Base64URL.decode(text)?.count == 32
    }
}
