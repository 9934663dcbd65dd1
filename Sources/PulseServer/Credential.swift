/// The kinds of one-time and bearer secrets the server hands out. All are stored as the SHA-256 of
/// their text only; the text itself is printed once, when it is made.
public enum CredentialKind: String, CaseIterable, Sendable {
    /// A staff-minted, single-use enrollment code (human-typable) for one session or series.
    case deviceCode = "device-code"
    /// A durable enrollment token for a series (an attendee's link), optionally capped in devices.
    case registrationToken = "registration-token"
    /// A bearer token for `/api/staff/…` (the console, the presenter's clicker).
    case staffToken = "staff-token"
}

/// A credential to store: its hash and what it grants.
public struct NewCredential: Sendable {
    public var hash: [UInt8]
    public var kind: CredentialKind
    /// What a device enrolled with it may read; nil for a staff token.
    public var scope: DeviceScope?
    /// Registration tokens: devices at most (nil: no cap).
    public var maxDevices: Int?
    public var createdAt: Int64
    public var expiresAt: Int64?

    public init(hash: [UInt8], kind: CredentialKind, scope: DeviceScope?, maxDevices: Int? = nil, createdAt: Int64, expiresAt: Int64? = nil) {
        self.hash = hash
        self.kind = kind
        self.scope = scope
        self.maxDevices = maxDevices
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// A stored credential as listed to an operator: never its text, only a short id from its hash.
public struct CredentialRecord: Equatable, Sendable {
    /// The first 12 hex digits of the hash: enough to tell credentials apart in a list, useless to enroll.
    public var id: String
    public var kind: CredentialKind
    public var scope: DeviceScope?
    public var maxDevices: Int?
    public var devicesEnrolled: Int
    public var createdAt: Int64
    public var expiresAt: Int64?
    /// When a device code was consumed.
    public var usedAt: Int64?
    public var revokedAt: Int64?

    public init(
        id: String, kind: CredentialKind, scope: DeviceScope?, maxDevices: Int?, devicesEnrolled: Int,
        createdAt: Int64, expiresAt: Int64?, usedAt: Int64?, revokedAt: Int64?
    ) {
        self.id = id
        self.kind = kind
        self.scope = scope
        self.maxDevices = maxDevices
        self.devicesEnrolled = devicesEnrolled
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.usedAt = usedAt
        self.revokedAt = revokedAt
    }
}
