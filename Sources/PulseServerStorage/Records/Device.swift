import PulseCrypto

/// A device to enroll: what the app sent, with the id the server chose.
public struct NewDevice: Sendable {
    public var id: String
    /// The device's P-256 public key, SubjectPublicKeyInfo DER (validated before it gets here).
    public var publicKey: [UInt8]
    public var platform: String
    public var name: String

    public init(id: String, publicKey: [UInt8], platform: String, name: String) {
        self.id = id
        self.publicKey = publicKey
        self.platform = platform
        self.name = name
    }
}

/// An enrolled device.
public struct DeviceRecord: Equatable, Sendable {
    public var id: String
    public var publicKey: [UInt8]
    public var platform: String
    public var name: String
    public var scope: DeviceScope
    public var enrolledAt: Int64
    public var revokedAt: Int64?
    /// The listing id of the credential it enrolled with.
    public var credentialId: String

    public init(
        id: String, publicKey: [UInt8], platform: String, name: String, scope: DeviceScope, enrolledAt: Int64,
        revokedAt: Int64?, credentialId: String
    ) {
        self.id = id
        self.publicKey = publicKey
        self.platform = platform
        self.name = name
        self.scope = scope
        self.enrolledAt = enrolledAt
        self.revokedAt = revokedAt
        self.credentialId = credentialId
    }

    public var isRevoked: Bool { revokedAt != nil }
}

/// Device ids: 16 random bytes as 32 lowercase hex digits (no `;` or `=`, so they sit in
/// `X-Pulse-Device` as they are).
public enum DeviceID {
    public static func generate() throws -> String {
        Hex.encode(try SecureRandom.bytes(16))
    }

    public static func isValid(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { Hex.value($0) != nil && !($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F")) }
    }
}
