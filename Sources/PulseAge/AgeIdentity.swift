import Foundation
import PulseCrypto

/// An age X25519 identity: a private key written `AGE-SECRET-KEY-1…` (Bech32, uppercase).
/// The key is held as `SecretBytes` (wiped when the last copy of the identity goes away); the
/// description names only the public recipient, so printing it cannot leak the secret.
public struct AgeIdentity: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    static let hrp = "age-secret-key-"

    private let privateKey: SecretBytes
    /// The recipient that files for this identity are encrypted to.
    public let recipient: AgeRecipient

    init(privateKey: SecretBytes) throws {
        self.privateKey = privateKey
        self.recipient = AgeRecipient(publicKey: try X25519.publicKey(privateKey: privateKey))
    }

    /// A new random identity.
    public static func generate() throws -> AgeIdentity {
        try AgeIdentity(privateKey: X25519.generatePrivateKey())
    }

    /// Parses one `AGE-SECRET-KEY-1…` string. Errors never quote it.
    public init(parsing text: String) throws(AgeError) {
        let trimmed = text.trimmingWhitespace()
        var decoded: (hrp: String, data: [UInt8], wasUppercase: Bool)
        do { decoded = try Bech32.decode(trimmed) } catch {
            throw .badIdentity("not an age X25519 identity (AGE-SECRET-KEY-1…): \(error.reason)")
        }
        let key = SecretBytes(wiping: &decoded.data)
        guard decoded.hrp == Self.hrp, decoded.wasUppercase else {
            throw .badIdentity("not an age X25519 identity (must be uppercase AGE-SECRET-KEY-1…)")
        }
        guard key.count == X25519.keyByteCount else {
            throw .badIdentity("holds \(key.count) bytes, an X25519 key has 32")
        }
        do { try self.init(privateKey: key) } catch {
            throw .badIdentity("unusable X25519 key")
        }
    }

    /// Parses identity-file text: one identity per line; empty lines and `#` comments are skipped.
    /// - Throws: `AgeError.badIdentity` with the line number (never its content), `.missing` for no
    ///   identity, `.tooLarge` over `AgeLimits.maxIdentityFileByteCount`.
    public static func parseFile(_ text: String, name: String = "identity file") throws(AgeError) -> [AgeIdentity] {
        guard text.utf8.count <= AgeLimits.maxIdentityFileByteCount else {
            throw .tooLarge("\(name) is \(text.utf8.count) bytes; identity files are at most \(AgeLimits.describe(AgeLimits.maxIdentityFileByteCount))")
        }
        var identities: [AgeIdentity] = []
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            do { identities.append(try AgeIdentity(parsing: line)) } catch {
                guard case let .badIdentity(reason) = error else { throw error }
                throw .badIdentity("\(name) line \(index + 1): \(reason)")
            }
        }
        guard !identities.isEmpty else { throw .missing("\(name) holds no AGE-SECRET-KEY-1… identity") }
        return identities
    }

    /// The secret `AGE-SECRET-KEY-1…` form, for writing an identity file. Never log it.
    public var secretKeyString: String {
        privateKey.withCopiedBytes { Bech32.encode(hrp: Self.hrp, data: $0) }.uppercased()
    }

    /// An identity file like age-keygen writes: created/public-key comments, then the secret line.
    public func fileContents(created: Date = Date()) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return "# created: \(formatter.string(from: created))\n# public key: \(recipient)\n\(secretKeyString)\n"
    }

    public var description: String { "AgeIdentity(recipient: \(recipient))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["recipient": recipient.description]) }

    /// The file key from the first `X25519` stanza this identity opens; nil if none is addressed to it.
    /// Stanzas must already have passed `Age.checkX25519Stanza`.
    func unwrap(_ stanzas: [AgeStanza]) throws(AgeError) -> SecretBytes? {
        for stanza in stanzas where stanza.type == AgeRecipient.stanzaType {
            let share = AgeBase64.decode(stanza.arguments[1])!
            let shared: SecretBytes
            do { shared = try X25519.sharedSecret(privateKey: privateKey, publicKey: share) } catch {
                throw .malformedHeader("X25519 stanza has a low-order ephemeral share")
            }
            guard let wrapKey = try? HKDF.sha256(
                inputKeyMaterial: shared, salt: share + recipient.publicKey, info: AgeRecipient.stanzaInfo, count: 32)
            else { throw .malformedHeader("cannot derive the X25519 wrap key") }
            if var fileKey = try? ChaCha20Poly1305.open(stanza.body, key: wrapKey, nonce: [UInt8](repeating: 0, count: 12)) {
                return SecretBytes(wiping: &fileKey)
            }
        }
        return nil
    }
}
