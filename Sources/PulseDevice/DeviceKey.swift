/// The device's signing key: the one thing the secure element holds. Everything else in this module only
/// asks it for its public half and for signatures, so an app replaces `FileDeviceKey` with a Secure Enclave
/// (iOS: `SecKeyCreateSignature` with `.ecdsaSignatureMessageX962SHA256`) or Android Keystore
/// (`SHA256withECDSA`) implementation without touching the rest. Both of those return DER
/// `ECDSA-Sig-Value`: convert it to P1363 (`r‖s`, each left-padded to 32 bytes) before returning it.
public protocol DeviceKey: Sendable {
    /// The public half as DER SubjectPublicKeyInfo (91 bytes for an uncompressed P-256 point): the
    /// enrollment's `publicKey`, base64.
    var publicKeySPKI: [UInt8] { get }

    /// ES256 over `message` (the key hashes it with SHA-256), as IEEE P1363 `r‖s`, 64 bytes.
    func sign(_ message: [UInt8]) throws -> [UInt8]
}
