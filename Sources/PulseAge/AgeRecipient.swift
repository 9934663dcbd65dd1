import PulseCrypto

/// An age X25519 recipient: a public key written `age1…` (Bech32, lowercase).
public struct AgeRecipient: Equatable, Sendable, CustomStringConvertible {
    static let hrp = "age"
    static let stanzaType = "X25519"
    static let stanzaInfo = Array("age-encryption.org/v1/X25519".utf8)

    /// The 32-byte X25519 public key.
    public let publicKey: [UInt8]

    init(publicKey: [UInt8]) {
        self.publicKey = publicKey
    }

    /// Parses an `age1…` recipient.
    /// - Throws: `AgeError.badRecipient` naming what is wrong (the string is public, so it is quoted).
    public init(parsing text: String) throws(AgeError) {
        let trimmed = text.trimmingWhitespace()
        // A secret key given by mistake must not be echoed into terminals and logs.
        guard !trimmed.uppercased().hasPrefix("AGE-SECRET-KEY-") else {
            throw .badRecipient("that is a secret identity (AGE-SECRET-KEY-…), not a recipient: give its age1… public key, and treat the identity as leaked")
        }
        let shown = "\"\(trimmed.prefix(80))\""
        guard trimmed.lowercased().hasPrefix("age1") else {
            throw .badRecipient("\(shown) is not an age X25519 recipient (age1…)")
        }
        let decoded: (hrp: String, data: [UInt8], wasUppercase: Bool)
        do { decoded = try Bech32.decode(trimmed) } catch {
            throw .badRecipient("\(shown) is not valid Bech32 (\(error.reason))")
        }
        guard decoded.hrp == Self.hrp, !decoded.wasUppercase else {
            throw .badRecipient("\(shown) is not an age X25519 recipient (age1…)")
        }
        guard decoded.data.count == X25519.keyByteCount else {
            throw .badRecipient("\(shown) holds \(decoded.data.count) bytes, an X25519 key has 32")
        }
        self.publicKey = decoded.data
    }

    /// The `age1…` form.
    public var description: String { Bech32.encode(hrp: Self.hrp, data: publicKey) }

    /// Wraps `fileKey` for this recipient in a fresh `X25519` stanza.
    func wrap(fileKey: SecretBytes) throws -> AgeStanza {
        let ephemeralSecret = try X25519.generatePrivateKey()
        let share = try X25519.publicKey(privateKey: ephemeralSecret)
        let shared = try X25519.sharedSecret(privateKey: ephemeralSecret, publicKey: publicKey)
        let wrapKey = try HKDF.sha256(
            inputKeyMaterial: shared, salt: share + publicKey, info: Self.stanzaInfo, count: 32)
        let body = try ChaCha20Poly1305.seal(fileKey, key: wrapKey, nonce: [UInt8](repeating: 0, count: 12))
        return AgeStanza(arguments: [Self.stanzaType, AgeBase64.encode(share)], body: body)
    }
}

extension Bech32.Failure {
    var reason: String {
        switch self {
        case .mixedCase: "mixed upper and lower case"
        case .noSeparator: "no \"1\" separator"
        case .badCharacter: "character outside the Bech32 alphabet"
        case .badChecksum: "checksum mismatch"
        case .badPadding: "bad padding bits"
        case .emptyHRP: "empty prefix"
        }
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
