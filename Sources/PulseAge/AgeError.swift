/// Why an age file, recipient or identity was refused. Each description is one line for the CLI and
/// never contains secret material (identities are referred to by position, not by content).
public enum AgeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input does not start with an age header (`age-encryption.org/v1`).
    case notAgeFile
    /// An age header of a version other than v1.
    case unsupportedVersion(String)
    /// A feature of age we do not implement (passphrase files).
    case unsupported(String)
    /// The header breaks the age v1 grammar or a stanza breaks its recipient type's rules.
    case malformedHeader(String)
    /// The file starts like ASCII armor (`-----BEGIN AGE ENCRYPTED FILE-----`) but is not strict armor.
    case malformedArmor(String)
    /// The header MAC does not match: the header was changed, or the file key is not the sender's.
    case headerMACMismatch
    /// The payload failed authentication, is truncated, or has data after its final chunk.
    case damagedPayload(String)
    /// None of the identities can unwrap any stanza of the file.
    case noMatchingIdentity
    /// A recipient string is not an `age1…` X25519 recipient.
    case badRecipient(String)
    /// An identity (or identity file line) is not an `AGE-SECRET-KEY-1…` X25519 identity.
    case badIdentity(String)
    /// Encryption was asked for with no recipients, or decryption with no identities.
    case missing(String)
    /// The input is over one of `AgeLimits` (file size, stanza count, identity file size).
    case tooLarge(String)

    public var description: String {
        switch self {
        case .notAgeFile: "not an age file (it does not start with \"age-encryption.org/v1\")"
        case let .unsupportedVersion(version): "unsupported age format version \"\(version)\" (only v1 is supported)"
        case let .unsupported(text): text
        case let .malformedHeader(text): "malformed age header: \(text)"
        case let .malformedArmor(text): "malformed age ASCII armor: \(text)"
        case .headerMACMismatch: "age header MAC mismatch: the header is damaged or was changed"
        case let .damagedPayload(text): "damaged age file: \(text)"
        case .noMatchingIdentity: "no identity matches this file (wrong identity, or the file was sealed to someone else)"
        case let .badRecipient(text): "bad recipient: \(text)"
        case let .badIdentity(text): "bad identity: \(text)"
        case let .missing(text): text
        case let .tooLarge(text): "too large: \(text)"
        }
    }
}
