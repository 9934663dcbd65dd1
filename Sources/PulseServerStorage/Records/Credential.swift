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

/// A registration token's own limits (issue 17: a durable attendee link must not be an amplifier). Each nil
/// is the server's default (`serve --token-enroll-rate`, `--token-enroll-burst`, `--token-max-streams`).
public struct TokenLimits: Equatable, Hashable, Sendable {
    /// Enrollments a second with this token, from every address together.
    public var enrollRate: Int?
    /// Enrollments at once (the door rush) before the rate applies.
    public var enrollBurst: Int?
    /// Event streams open at once, per server instance, by all the devices this token enrolled.
    public var maxStreams: Int?

    public init(enrollRate: Int? = nil, enrollBurst: Int? = nil, maxStreams: Int? = nil) {
        self.enrollRate = enrollRate
        self.enrollBurst = enrollBurst
        self.maxStreams = maxStreams
    }

    public static let defaults = TokenLimits()
}

/// A credential to store: its hash and what it grants.
public struct NewCredential: Sendable {
    public var hash: [UInt8]
    public var kind: CredentialKind
    /// What a device enrolled with it may read; nil for a staff token.
    public var scope: DeviceScope?
    /// Registration tokens: devices at most (nil: no cap).
    public var maxDevices: Int?
    /// Registration tokens: their own enrollment rate and stream cap.
    public var limits: TokenLimits
    public var createdAt: Int64
    public var expiresAt: Int64?
    /// Staff tokens: the role (nil for the other kinds) and the session a scoped token acts on.
    public var staffRole: StaffRole?
    public var staffSession: String?

    public init(
        hash: [UInt8], kind: CredentialKind, scope: DeviceScope?, maxDevices: Int? = nil, limits: TokenLimits = .defaults, createdAt: Int64,
        expiresAt: Int64? = nil, staffRole: StaffRole? = nil, staffSession: String? = nil
    ) {
        self.hash = hash
        self.kind = kind
        self.scope = scope
        self.maxDevices = maxDevices
        self.limits = limits
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.staffRole = kind == .staffToken ? staffRole ?? .admin : nil
        self.staffSession = kind == .staffToken ? staffSession : nil
    }
}

/// A registration token as the enroll route and the event streams check it: by its hash (what an
/// enrollment presents) or its listing id (what a device record names), with its limits.
public struct RegistrationToken: Equatable, Sendable {
    public var hash: [UInt8]
    public var listingId: String
    public var limits: TokenLimits

    public init(hash: [UInt8], listingId: String, limits: TokenLimits) {
        self.hash = hash
        self.listingId = listingId
        self.limits = limits
    }
}

/// What a revocation did: whether the credential was active until now, and how many of the devices it
/// enrolled were revoked with it (`--with-devices`).
public struct Revocation: Equatable, Sendable {
    public var credential: Bool
    public var devices: Int

    public init(credential: Bool, devices: Int) {
        self.credential = credential
        self.devices = devices
    }

    /// What caches must drop after it.
    var changed: StorageGeneration.Kinds {
        var kinds: StorageGeneration.Kinds = []
        if credential { kinds.insert(.credentials) }
        if devices > 0 { kinds.insert(.devices) }
        return kinds
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
    /// Registration tokens: their own limits (nil fields: the server's defaults).
    public var limits: TokenLimits
    public var createdAt: Int64
    public var expiresAt: Int64?
    /// When a device code was consumed.
    public var usedAt: Int64?
    public var revokedAt: Int64?
    /// Staff tokens: the role (nil for the other kinds, or a role this program does not know) and the session.
    public var staffRole: StaffRole?
    public var staffSession: String?

    public init(
        id: String, kind: CredentialKind, scope: DeviceScope?, maxDevices: Int?, devicesEnrolled: Int, limits: TokenLimits = .defaults,
        createdAt: Int64, expiresAt: Int64?, usedAt: Int64?, revokedAt: Int64?, staffRole: StaffRole? = nil, staffSession: String? = nil
    ) {
        self.staffRole = staffRole
        self.staffSession = staffSession
        self.id = id
        self.kind = kind
        self.scope = scope
        self.maxDevices = maxDevices
        self.devicesEnrolled = devicesEnrolled
        self.limits = limits
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.usedAt = usedAt
        self.revokedAt = revokedAt
    }
}
