import Foundation
import PulseCrypto
import PulseServerStorage
import Synchronization

/// What the sync routes read on every request, kept in memory and revalidated with one
/// `storage.generation()` call per request: devices with their parsed public keys, sessions, session
/// content and rendered manifests, key tables with their answers prepared, series, staff tokens. A signed
/// `GET /api/sync/keys` while nothing changes touches the database only for `PRAGMA data_version`.
///
/// Each kind is dropped only when its counter moved (`StorageGeneration`): an advance drops the session
/// records (a handful), not the devices; an enroll drops nothing (a new device is a miss). Parsed public
/// keys are kept by their bytes, so even a revocation, which drops the device records, costs one indexed
/// read per device afterwards and no key parsing.
///
/// A record loaded from storage is stored only if the generation did not move while it was read, so a
/// read that raced a change never outlives it.
public final class SyncCache: Sendable {
    /// An enrolled device with its key parsed once.
    struct Device: Sendable {
        let record: DeviceRecord
        let key: P256.PublicKey
    }

    private struct State {
        var generation: StorageGeneration?
        var devices: [String: Device] = [:]
        var sessions: [String: SessionRecord] = [:]
        var contents: [String: SessionContent] = [:]
        var keys: [String: KeyAnswers] = [:]
        var series: [String: SeriesRecord] = [:]
        var rendered: [String: ManifestView.Rendered] = [:]
        var staffTokens: [ActiveStaffToken]?
        var registrationTokens: RegistrationTokens?
    }

    /// The registration tokens (revoked ones too), by hash (enroll) and by listing id (a device's record).
    struct RegistrationTokens: Sendable {
        var byHash: [[UInt8]: RegistrationToken] = [:]
        var byListing: [String: RegistrationToken] = [:]
    }

    let storage: any ServerStorage
    private let state = Mutex(State())
    /// Parsed keys by their SPKI bytes: a key's bytes never change meaning, so this is never stale.
    private let publicKeys = Mutex<[[UInt8]: P256.PublicKey]>([:])
    /// Devices, sessions and manifests held at most (beyond: that kind starts over; a reload is a read).
    private let capacity: Int

    init(storage: any ServerStorage, capacity: Int = 200_000) {
        self.storage = storage
        self.capacity = capacity
    }

    /// Asks storage whether anything changed and drops what went stale. Call once per request, first.
    @discardableResult
    public func revalidate() throws -> StorageGeneration {
        let current = try storage.generation()
        state.withLock { state in
            guard state.generation != current else { return }
            let held = state.generation
            if held?.devices != current.devices { state.devices = [:] }
            // Rendered manifests depend on content only (the released set is part of their name).
            if held?.sessions != current.sessions { state.sessions = [:] }
            if held?.content != current.content {
                state.contents = [:]
                state.keys = [:]
                state.series = [:]
                state.rendered = [:]
            }
            if held?.credentials != current.credentials {
                state.staffTokens = nil
                state.registrationTokens = nil
            }
            state.generation = current
        }
        return current
    }

    /// Loads with `load` on a miss, and keeps the result if the counter of its `kind` did not move
    /// meanwhile (other kinds may: enrolls move the generation all through an event).
    private func cached<T>(
        _ kind: KeyPath<StorageGeneration, Int64>, _ read: (inout State) -> T?, load: () throws -> T?,
        store: (inout State, T) -> Void
    ) throws -> T? {
        let (hit, before) = state.withLock { state in (read(&state), state.generation?[keyPath: kind]) }
        if let hit { return hit }
        guard let loaded = try load() else { return nil }
        state.withLock { state in
            if let before, state.generation?[keyPath: kind] == before { store(&state, loaded) }
        }
        return loaded
    }

    /// The kinds this cache holds older than the database does (`check`, read with the request's rate token):
    /// `devices` when it holds `device` as active and the database no longer does, `sessions` and `content`
    /// when it holds `session` at a lower change sequence (an import appends to the change log too).
    func behind(_ check: RequestCheck, device: String, session: String?) -> StorageGeneration.Kinds {
        state.withLock { state in
            var kinds: StorageGeneration.Kinds = []
            if !check.deviceActive, let held = state.devices[device], !held.record.isRevoked { kinds.insert(.devices) }
            if let session, let sequence = check.sessionSequence, let held = state.sessions[session], held.changeSequence < sequence {
                kinds.formUnion([.sessions, .content])
            }
            return kinds
        }
    }

    // MARK: Devices

    /// The device `id` with its parsed key; nil when unknown. A stored key that no longer parses is a
    /// storage error (enroll validated it).
    func device(_ id: String) throws -> Device? {
        try cached(\.devices, { $0.devices[id] }, load: {
            guard let record = try storage.device(id: id) else { return nil }
            return Device(record: record, key: try publicKey(record.publicKey, device: id))
        }, store: { state, device in
            if state.devices.count >= capacity { state.devices = [:] }
            state.devices[id] = device
        })
    }

    /// Keeps a key parsed elsewhere (an enrollment validated it), so the device's first signed request
    /// does not parse it again.
    func remember(_ key: P256.PublicKey) {
        publicKeys.withLock { keys in
            if keys.count >= capacity { keys = [:] }
            keys[key.derRepresentation] = key
        }
    }

    /// Parses the keys of every enrolled, unrevoked device now (a server's start, on a thread of its own),
    /// so that the first minutes of an event do not pay for 10,000 key parses on the request path.
    /// Returns how many keys it parsed.
    @discardableResult
    func warmPublicKeys() throws -> Int {
        var parsed = 0
        for device in try storage.devices() where !device.isRevoked && publicKeys.withLock({ $0.count < capacity && $0[device.publicKey] == nil }) {
            _ = try publicKey(device.publicKey, device: device.id)
            parsed += 1
        }
        return parsed
    }

    private func publicKey(_ bytes: [UInt8], device: String) throws -> P256.PublicKey {
        if let key = publicKeys.withLock({ $0[bytes] }) { return key }
        let key: P256.PublicKey
        do { key = try P256.PublicKey(derRepresentation: bytes) } catch {
            throw ServerError(.storage, "device \(device) has an unreadable public key in the database")
        }
        publicKeys.withLock { keys in
            if keys.count >= capacity { keys = [:] }
            keys[bytes] = key
        }
        return key
    }

    // MARK: Sessions and content

    func session(_ id: String) throws -> SessionRecord? {
        try cached(\.sessions, { $0.sessions[id] }, load: { try storage.session(id: id) }, store: { state, session in
            if state.sessions.count >= capacity { state.sessions = [:] }
            state.sessions[id] = session
        })
    }

    func content(_ id: String) throws -> SessionContent? {
        try cached(\.content, { $0.contents[id] }, load: { try storage.sessionContent(id: id) }, store: { state, content in
            if state.contents.count >= capacity { state.contents = [:] }
            state.contents[id] = content
        })
    }

    func series(_ id: String) throws -> SeriesRecord? {
        try cached(\.content, { $0.series[id] }, load: { try storage.series(id: id) }, store: { state, series in
            if state.series.count >= capacity { state.series = [:] }
            state.series[id] = series
        })
    }

    /// The prepared key answers of (session, deckVersion); nil when the table is missing.
    func keys(session: String, deckVersion: Int) throws -> KeyAnswers? {
        let name = "\(session)/\(deckVersion)"
        return try cached(\.content, { $0.keys[name] }, load: {
            try storage.keyTable(sessionId: session, deckVersion: deckVersion).map(KeyAnswers.init)
        }, store: { state, answers in
            if state.keys.count >= capacity { state.keys = [:] }
            state.keys[name] = answers
        })
    }

    /// The session manifest a device sees now: gated resources released by the session's state and
    /// frontier and the server's clock substituted (`ManifestView`), rendered once per released set.
    func manifest(_ session: SessionRecord, now: Int64) throws -> ManifestView.Rendered? {
        guard let content = try content(session.id) else { return nil }
        let released = ManifestView.releasedResources(content, session: session, now: now)
        let name = session.id + "\n" + released.sorted().joined(separator: ",")
        return try cached(\.content, { $0.rendered[name] }, load: { try ManifestView.session(content, released: released) }, store: { state, rendered in
            if state.rendered.count >= capacity { state.rendered = [:] }
            state.rendered[name] = rendered
        })
    }

    /// The series manifest a device sees now: each session ref at the session's visible packageVersion.
    func seriesManifest(_ series: SeriesRecord, now: Int64) throws -> ManifestView.Rendered {
        var visible: [String: String] = [:]
        for id in series.sessionIds {
            if let session = try session(id), let rendered = try manifest(session, now: now) { visible[id] = rendered.packageVersion }
        }
        let name = "series " + series.id + "\n" + series.sessionIds.map { visible[$0] ?? "" }.joined(separator: ",")
        return try cached(\.content, { $0.rendered[name] }, load: { try ManifestView.series(series, visibleVersions: visible) }, store: { state, rendered in
            state.rendered[name] = rendered
        }) ?? ManifestView.series(series, visibleVersions: visible)
    }

    // MARK: Staff tokens

    /// Who the staff token with `hash` acts as at `now` (its listing id, role and session), or nil when no
    /// active token has that hash (unknown, revoked, expired). Compared against every cached hash in constant
    /// time (no early exit, no index lookup keyed by the presented value). A revocation moves the credentials
    /// generation, so it takes effect on the next request (`revalidate` first).
    public func staffPrincipal(hash: [UInt8], now: Int64) throws -> StaffPrincipal? {
        let tokens = try cached(\.credentials, { $0.staffTokens }, load: { try storage.activeStaffTokens(at: now) }, store: { $0.staffTokens = $1 }) ?? []
        var found: ActiveStaffToken?
        for token in tokens {
            let matches = constantTimeEqual(token.hash, hash)
            let current = token.expiresAt.map { $0 > now } ?? true
            if matches && current { found = token }
        }
        return found.map { StaffPrincipal(tokenId: CredentialSecret.listingId(hash: $0.hash), role: $0.role, session: $0.session) }
    }

    // MARK: Registration tokens

    /// The registration tokens, read once per change of credentials (a handful per event).
    private func registrationTokens() throws -> RegistrationTokens {
        try cached(\.credentials, { $0.registrationTokens }, load: {
            var tokens = RegistrationTokens()
            for token in try storage.registrationTokens() {
                tokens.byHash[token.hash] = token
                tokens.byListing[token.listingId] = token
            }
            return tokens
        }, store: { $0.registrationTokens = $1 }) ?? RegistrationTokens()
    }

    /// The registration token whose hash an enrollment presents; nil for any other credential or none.
    func registrationToken(hash: [UInt8]) throws -> RegistrationToken? { try registrationTokens().byHash[hash] }

    /// The registration token a device enrolled with (its record's `credentialId`); nil for a device code.
    func registrationToken(listingId: String) throws -> RegistrationToken? { try registrationTokens().byListing[listingId] }

    // MARK: For tests

    /// How many device records, sessions and parsed keys are held now.
    var held: (devices: Int, sessions: Int, keys: Int, publicKeys: Int) {
        let (devices, sessions, keys) = state.withLock { ($0.devices.count, $0.sessions.count, $0.keys.count) }
        return (devices, sessions, keys, publicKeys.withLock { $0.count })
    }
}
