import PulseCrypto

/// Everything pulse-server keeps, behind one narrow interface: SQLite now (`SQLiteStorage`), one
/// PostgreSQL shared by several instances next. `StorageSuite` (in the tests) runs the same checks,
/// concurrency included, against every backend.
///
/// Rules every backend keeps:
/// - Races are decided by the database in one statement or one transaction holding the write lock: a
///   conditional UPDATE consumes a device code, `max()` moves a frontier, a unique insert records a
///   replay key. Never read-then-decide-then-write across calls.
/// - Credentials are stored as SHA-256 hashes only.
/// - Times are Unix seconds from the server's clock, passed in (`at`), so tests control them.
/// - A method returns when its change is durable (committed); `generation()` changes after every
///   committed change of credentials, devices, sessions or content, by this process or any other, so
///   callers can cache them and revalidate cheaply. Replay keys and samples do not change it: they are
///   written on every signed POST and no cache holds them.
///
/// Methods throw `ServerError` (storage failures, conflicts) and nothing else.
///
/// The requirements come in one protocol per concern, and each backend implements each in a file of the
/// same name (`SQLiteStorage+Devices.swift` ↔ `PostgresStorage+Devices.swift`):
///
/// | protocol | what | files |
/// |---|---|---|
/// | `ChangeStorage` | the generation, reachability, change notices | `SQLiteStorage.swift`, `PostgresStorage.swift` (+ `PostgresChangeWatch.swift`) |
/// | `CredentialStorage` | device codes, registration and staff tokens | `+Credentials` |
/// | `DeviceStorage` | enrollment and devices | `+Devices` |
/// | `SessionStorage` | sessions, their frontier and change log | `+Sessions` |
/// | `ContentStorage` | imports, manifests, key tables, series | `+Content` |
/// | `SampleStorage` | replay keys of signed POSTs and diagnostics samples | `+Samples` |
/// | `RateLimitStorage` | token buckets | `+RateLimits` |
/// | `AuditStorage` | the audit log of staff and admin actions | `+Audit` |
/// | `AnswerKeyStorage` | the keys that sign sync answers (not part of `ServerStorage`: the serve and admin commands ask for it) | `+AnswerKeys` |
///
/// One file has no twin: `PostgresStorage+CertificateKeys.swift`. SQLite serves one box, which keeps its device
/// certificate key in the data folder (`device-cert-key.pem`, PulseServer's `DeviceCertificateKey+DataFolder`);
/// instances sharing a PostgreSQL database must sign and publish with the same keys, so that backend keeps them
/// in the database (`prepareCertificateKeys`, `certificateKeys()`), and `serve` asks it for them by its type.
///
/// Every method that changes what an operator controls (credentials, device revocations, sessions,
/// imports) takes `audit`: the entries it appends to the audit log in the same transaction as the change,
/// only when the change is done (not when it answers nil, false, `.refused` or throws). So no action is
/// done without its record; a refusal is recorded by the caller afterwards (`appendAudit`).
public protocol ServerStorage: ChangeStorage, CredentialStorage, DeviceStorage, SessionStorage, ContentStorage, SampleStorage, RateLimitStorage,
    AuditStorage {}

/// Change detection: what lets callers cache and revalidate cheaply (see `ServerStorage`).
public protocol ChangeStorage: AnyObject, Sendable {
    /// A value that changes whenever any process commits a change to credentials, devices, sessions or
    /// content. Cheap: meant to be called on every request to decide whether cached devices, sessions
    /// and key tables are still current.
    func generation() throws -> StorageGeneration

    /// Throws when the database cannot be reached now (`/healthz`). A backend whose `generation()` asks
    /// the database anyway needs nothing more (the default); one that answers it from memory
    /// (PostgreSQL) makes a round trip here.
    func checkAvailable() throws

    /// Calls `handler` with the kinds that moved each time a change made elsewhere (another instance, the
    /// admin CLI) reaches `generation()` without being asked, so a waiter (the event hub) can look at once
    /// instead of at its next poll. A backend that learns of changes only when asked (SQLite: `PRAGMA
    /// data_version`) never calls it (the default). Called on the backend's own thread: keep it short.
    func observeChanges(_ handler: @escaping @Sendable (StorageGeneration.Kinds) -> Void)

    /// Moves `generation()` for `kinds` now: the caller saw in the database a change whose notification has
    /// not arrived yet (`RequestCheck`). Nothing to do where `generation()` is never behind (the default).
    func catchUp(_ kinds: StorageGeneration.Kinds)
}

/// Device codes, registration tokens and staff tokens, stored as SHA-256 hashes only.
public protocol CredentialStorage: AnyObject, Sendable {
    /// Stores a new credential (device code, registration token or staff token), with `audit`.
    func addCredential(_ credential: NewCredential, audit: [AuditEntry]) throws
    /// Revokes the credential with `hash` (any kind) and, with `withDevices`, every device it enrolled that is
    /// not revoked yet, in one transaction: a leaked link's devices are cut at once.
    /// - Returns: nil when there is no such credential, or it was already revoked and there was nothing else to
    ///   revoke (no `withDevices`, or none of its devices active); else what was revoked (and `audit` is appended).
    func revokeCredential(hash: [UInt8], at now: Int64, withDevices: Bool, audit: [AuditEntry]) throws -> Revocation?
    /// The same for the credential whose listing id is `id` (refused when the id names more than one).
    func revokeCredential(listingId id: String, at now: Int64, withDevices: Bool, audit: [AuditEntry]) throws -> Revocation?
    /// Every credential, newest first, for operators (never the text, only the listing id).
    func credentials() throws -> [CredentialRecord]
    /// A page of the credentials of `kinds`, newest first, from `offset`, at most `limit`, and how many there
    /// are in all (the console's lists of codes and links, and of staff tokens).
    func credentials(kinds: [CredentialKind], offset: Int, limit: Int) throws -> (credentials: [CredentialRecord], total: Int)
    /// How many devices each credential enrolled since `since` (listing id → count; none: absent), for the
    /// listings' "enrolled in the last minute": counted in 10-second buckets (`EnrollmentBuckets`), so from the
    /// start of `since`'s bucket, and only within the last `EnrollmentBuckets.kept` seconds of enrollments.
    func recentEnrollments(since: Int64) throws -> [String: Int]
    /// Every registration token, revoked ones too (their devices' streams stay capped), with its limits (the
    /// HTTP layer caches them, revalidated by `generation().credentials`).
    func registrationTokens() throws -> [RegistrationToken]
    /// True when `hash` is a staff token that is neither revoked nor expired.
    func isStaffToken(hash: [UInt8], at now: Int64) throws -> Bool

    /// The SHA-256 hashes of staff tokens that are neither revoked nor expired at `now`, with their
    /// expiry, role and session: the HTTP layer caches them (revalidated by `generation().credentials`) and compares a
    /// presented token's hash against each in constant time.
    func activeStaffTokens(at now: Int64) throws -> [ActiveStaffToken]
}

/// Enrollment (which consumes a credential) and the enrolled devices.
public protocol DeviceStorage: AnyObject, Sendable {
    /// Consumes the credential with `credentialHash` and stores `device` with the credential's scope,
    /// atomically. A device code enrolls one device ever; a registration token up to its cap.
    ///
    /// Enrolling is idempotent per (credential, public key): a retry of an enrollment whose answer was lost
    /// (the server or a proxy died after COMMIT, the app asked again) returns the device it made, with its
    /// id and `enrolledAt`, as long as that device is not revoked and the credential is neither revoked nor
    /// expired; it consumes nothing more. So a lost answer never spends a code invisibly, and a proxy may
    /// retry an enrollment on another instance.
    /// - Returns: the new device (or the one a retry made: its id differs from `device.id`), or nil when the
    ///   credential is unknown, of the wrong kind, expired, revoked, used up, or the device id is taken (the
    ///   caller answers all of these the same way).
    func enroll(credentialHash: [UInt8], device: NewDevice, at now: Int64) throws -> DeviceRecord?
    func device(id: String) throws -> DeviceRecord?
    /// Every device, oldest first.
    func devices() throws -> [DeviceRecord]
    /// The devices with these ids (at most a page of them), in no particular order; unknown ids are left out.
    func devices(ids: [String]) throws -> [DeviceRecord]
    /// A page of the devices whose name, platform, id or scope id contains `search` (already lowercased; ""
    /// matches all; letters compared case-insensitively) and whose scope is one of `scopes` (nil: any), newest
    /// enrolment first, from `offset`, at most `limit`, and how many match in all (the console's devices page;
    /// `scopes` is the staff principal's, `StaffAPI.deviceScopes(visibleTo:)`).
    func devices(matching search: String, scopes: [DeviceScope]?, offset: Int, limit: Int) throws -> (devices: [DeviceRecord], total: Int)
    /// False when there is no such device or it was already revoked; true when revoked (with `audit`).
    func revokeDevice(id: String, at now: Int64, audit: [AuditEntry]) throws -> Bool
}

/// Sessions: state, frontier, settings, and the change log event streams replay.
public protocol SessionStorage: AnyObject, Sendable {
    func session(id: String) throws -> SessionRecord?
    func sessions() throws -> [SessionRecord]
    /// Applies `update`; the frontier moves with `max()` only (clamped to the deck's last slide).
    /// - Returns: the updated record (and `audit` appended), or nil when there is no such session.
    func updateSession(id: String, _ update: SessionUpdate, at now: Int64, audit: [AuditEntry]) throws -> SessionRecord?
    /// The presenter's advance: in live, the live frontier becomes `max(frontier, slide)`; in rehearsal,
    /// the rehearsal frontier does; other states refuse. `slide` is clamped to the deck's last slide.
    /// `audit` is appended with `.advanced` (moved or not), not with a refusal.
    func advance(sessionId: String, to slide: Int, at now: Int64, audit: [AuditEntry]) throws -> AdvanceOutcome
    /// The session's changes with a sequence number above `sequence`, oldest first, at most `limit`.
    func changes(sessionId: String, after sequence: Int64, limit: Int) throws -> [SessionChange]
}

/// What imports write: manifests, key tables, gated resources, series.
public protocol ContentStorage: AnyObject, Sendable {
    /// Writes an import in one transaction (with `audit`), or nothing.
    /// - Throws: `ServerError.conflict` when a (session, deckVersion) is held with other keys, a session
    ///   belongs to another package (without `replacePackage`), or the package's deck is older than the
    ///   one held.
    func importContent(_ plan: ImportPlan, options: ImportOptions, at now: Int64, audit: [AuditEntry]) throws -> ImportSummary
    func sessionContent(id: String) throws -> SessionContent?
    func keyTable(sessionId: String, deckVersion: Int) throws -> KeyTableRecord?
    func series(id: String) throws -> SeriesRecord?
}

/// Signed POSTs (their replay keys) and the diagnostics samples they carry.
public protocol SampleStorage: AnyObject, Sendable {
    /// Records the replay key of a signed POST (kept until `expiresAt`) and, with it, `sample`.
    /// - Returns: false when the key is already recorded and not expired: a replay; nothing is written.
    func recordSignedRequest(replayKey: [UInt8], expiresAt: Int64, sample: DiagSample?, at now: Int64) throws -> Bool
    /// Deletes replay keys that expired before `now`; returns how many.
    @discardableResult
    func pruneReplayKeys(at now: Int64) throws -> Int
    /// Every sample of a session, oldest first (the end-of-event report).
    func samples(sessionId: String) throws -> [DiagSample]
    /// The newest sample of each device that posted since `since` (the moderator's live view).
    func latestSamples(sessionId: String, since: Int64) throws -> [DiagSample]
    /// The same, the most recently received first (ties: device ids from the last) and at most `limit` of
    /// them, with how many devices posted (the console's live view: a table of the latest few of a room of
    /// 10,000, and the room's count).
    func latestSamples(sessionId: String, since: Int64, limit: Int) throws -> (samples: [DiagSample], devices: Int)
    /// The newest sample of any session of each of `deviceIds` (at most a page of them), by device id.
    func latestSamples(deviceIds: [String]) throws -> [String: DiagSample]
    /// How many samples session `sessionId` has and the id of its newest: changes with every sample stored,
    /// so a report made from `samples(sessionId:)` can be kept until it does (one index range read).
    func sampleStamp(sessionId: String) throws -> SampleStamp
}

/// The audit log: append-only (no method updates or deletes a row; both schemas refuse UPDATE and DELETE
/// on it), ids monotonic in commit order, read by `admin audit list` and `GET /api/staff/audit`.
public protocol AuditStorage: AnyObject, Sendable {
    /// Appends `entries` in a transaction of their own: a refusal or a failure, recorded after the action's
    /// transaction (if any) rolled back. Appending changes no cache (`generation()` does not move).
    func appendAudit(_ entries: [AuditEntry]) throws
    /// The rows with an id above `after` and a time at or after `since`, oldest first, at most `limit`.
    func auditEntries(after id: Int64, since: Int64?, limit: Int) throws -> [AuditRecord]
}

/// The answer-signing keys, shared by every instance of a database (issue 21). Kept by both backends in
/// table `answer_keys`; a change moves `generation().credentials`, so servers read them again.
public protocol AnswerKeyStorage: AnyObject, Sendable {
    /// Every key, oldest first.
    func answerKeys() throws -> [AnswerKeyRecord]
    /// Makes sure there is a key: when the table holds none, stores `adopting` (a data folder's
    /// `answer-key.pem`), else a new random key, signing from 0. Never adds one to a table that holds any
    /// (a retired key is not brought back). With `signingFor` (a server about to sign with that answer TTL),
    /// raises every key's `ttl` to at least it, in the same transaction. - Returns: every key.
    func prepareAnswerKeys(adopting: P256.PrivateKey?, signingFor ttl: Int64?, at now: Int64) throws -> [AnswerKeyRecord]
    /// Rotation: keys whose last answer expired (`signsUntil + ttl < now`, each key's own `ttl`) are removed; a
    /// new key signs from `now + lead` (default: the longest `ttl` of the keys left) and inherits that `ttl`;
    /// every key that signs open-ended stops then. - Returns: the new key.
    func rotateAnswerKey(lead: Int64?, at now: Int64) throws -> AnswerKeyRecord
}

/// Token buckets, and with them the check of a device-scoped request.
public protocol RateLimitStorage: AnyObject, Sendable {
    /// Takes one token from the bucket `key` (e.g. a device id, a client address), shaped by `limit`.
    /// `now` is the server's clock in seconds with a fraction. SQLite keeps the buckets in memory (one
    /// box); a backend shared by several instances keeps them where every instance sees them.
    func takeRateToken(_ key: String, limit: RateLimit, at now: Double) throws -> RateDecision

    /// `takeRateToken`, and in the same round trip what the database holds now for a device-scoped request
    /// (`RequestCheck`): whether `device` is active, and the change sequence of `session`. A backend whose
    /// `generation()` can be a moment behind another instance's commit (PostgreSQL: until its notification
    /// arrives) answers it, so the caller can catch up (`catchUp`) before it answers from a cache; one whose
    /// `generation()` is never behind (SQLite asks the file) answers nil (the default).
    func takeRateToken(_ key: String, limit: RateLimit, at now: Double, checking device: String, session: String?) throws
        -> (RateDecision, RequestCheck?)
}

/// What the database holds for one device-scoped request, read with its rate token
/// (`ServerStorage.takeRateToken(_:limit:at:checking:session:)`).
public struct RequestCheck: Equatable, Sendable {
    /// The device exists and is not revoked.
    public var deviceActive: Bool
    /// The session's change sequence; nil when no session was asked or there is none.
    public var sessionSequence: Int64?

    public init(deviceActive: Bool, sessionSequence: Int64?) {
        self.deviceActive = deviceActive
        self.sessionSequence = sessionSequence
    }
}

extension CredentialStorage {
    /// Stores a new credential with no audit entry (tests, tools that record elsewhere).
    public func addCredential(_ credential: NewCredential) throws { try addCredential(credential, audit: []) }

    public func revokeCredential(hash: [UInt8], at now: Int64, withDevices: Bool) throws -> Revocation? {
        try revokeCredential(hash: hash, at: now, withDevices: withDevices, audit: [])
    }

    public func revokeCredential(listingId id: String, at now: Int64, withDevices: Bool) throws -> Revocation? {
        try revokeCredential(listingId: id, at: now, withDevices: withDevices, audit: [])
    }

    /// Revokes the credential alone; false when there is none or it was already revoked.
    public func revokeCredential(hash: [UInt8], at now: Int64) throws -> Bool {
        try revokeCredential(hash: hash, at: now, withDevices: false) != nil
    }

    /// Revokes the credential with listing id `id` alone; false when none or already revoked.
    public func revokeCredential(listingId id: String, at now: Int64) throws -> Bool {
        try revokeCredential(listingId: id, at: now, withDevices: false) != nil
    }

}

extension DeviceStorage {
    public func revokeDevice(id: String, at now: Int64) throws -> Bool { try revokeDevice(id: id, at: now, audit: []) }
}

extension SessionStorage {
    public func updateSession(id: String, _ update: SessionUpdate, at now: Int64) throws -> SessionRecord? {
        try updateSession(id: id, update, at: now, audit: [])
    }

    public func advance(sessionId: String, to slide: Int, at now: Int64) throws -> AdvanceOutcome {
        try advance(sessionId: sessionId, to: slide, at: now, audit: [])
    }
}

extension ContentStorage {
    public func importContent(_ plan: ImportPlan, options: ImportOptions, at now: Int64) throws -> ImportSummary {
        try importContent(plan, options: options, at: now, audit: [])
    }
}

extension RateLimitStorage {
    public func takeRateToken(_ key: String, limit: RateLimit, at now: Double, checking device: String, session: String?) throws
        -> (RateDecision, RequestCheck?)
    {
        (try takeRateToken(key, limit: limit, at: now), nil)
    }
}

extension ChangeStorage {
    public func catchUp(_ kinds: StorageGeneration.Kinds) {}
    public func checkAvailable() throws {}
    public func observeChanges(_ handler: @escaping @Sendable (StorageGeneration.Kinds) -> Void) {}
}

/// See `ServerStorage.generation()`. Compare for equality only.
///
/// `value` moves with every change a cache may hold; the four counters say which kind moved, so a
/// cache drops only what went stale (an advance must not throw away 10,000 parsed device keys):
///
/// | counter | moves when |
/// |---|---|
/// | `credentials` | a credential is added or revoked (staff tokens are cached) |
/// | `devices` | a stored device changes: a revocation. Not an enroll: a new device is a cache miss anyway |
/// | `sessions` | a session's state, frontier or settings change, or its change log grows |
/// | `content` | an import changes a manifest, a key table, gated resources or a series |
public struct StorageGeneration: Equatable, Hashable, Sendable {
    public var value: Int64
    public var credentials: Int64
    public var devices: Int64
    public var sessions: Int64
    public var content: Int64

    public init(_ value: Int64, credentials: Int64 = 0, devices: Int64 = 0, sessions: Int64 = 0, content: Int64 = 0) {
        self.value = value
        self.credentials = credentials
        self.devices = devices
        self.sessions = sessions
        self.content = content
    }

    /// The kinds of change `StorageGeneration` counts.
    public struct Kinds: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let credentials = Kinds(rawValue: 1)
        public static let devices = Kinds(rawValue: 2)
        public static let sessions = Kinds(rawValue: 4)
        public static let content = Kinds(rawValue: 8)
    }
}

/// What `SampleStorage.sampleStamp` answers: equal stamps, equal samples.
public struct SampleStamp: Equatable, Hashable, Sendable {
    public var count: Int64
    public var newest: Int64

    public init(count: Int64, newest: Int64) {
        self.count = count
        self.newest = newest
    }
}

/// The answer of a rate limiter: go ahead, or wait this many seconds (rounded up, at least 1).
public enum RateDecision: Equatable, Sendable {
    case allowed
    case limited(retryAfter: Int)
}

/// A token bucket's shape: `rate` tokens a second refill it, up to `burst`.
public struct RateLimit: Equatable, Hashable, Sendable {
    public var rate: Double
    public var burst: Double

    public init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
    }
}
