/// Why a `Pulse-Signature` was refused. Descriptions quote nothing but a validated key id.
public enum AnswerSignatureError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not a well-formed signature: wrong shape, too long, bad base64url, a protected header that is not
    /// canonical JSON or lacks a required member, a signature that is not 64 bytes. The text says which rule.
    case malformed(String)
    /// Well formed, but signed by a key id none of the trusted keys has (refetch the key set).
    case unknownKey(kid: String)
    /// The signature does not verify with the trusted key of that id: the header or body was altered.
    case badSignature(kid: String)

    public var description: String {
        switch self {
        case let .malformed(rule): "malformed answer signature: \(rule)"
        case let .unknownKey(kid): "answer signed by unknown key \(kid)"
        case let .badSignature(kid): "answer signature does not verify with key \(kid) (header or body altered)"
        }
    }
}
