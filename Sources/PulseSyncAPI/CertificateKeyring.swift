import Foundation
import PulseHTTPServer
import PulseServerStorage
import Synchronization

/// The device certificate keys of a server: the one that signs new certificates, and every key
/// `GET /api/sync/device-cert-keys` publishes, so that a certificate signed by any of them verifies.
///
/// One box (SQLite) has one key, in its data folder. Instances sharing PostgreSQL keep theirs in the
/// database (`PostgresStorage.certificateKeys()`): the oldest signs, all are published, and the set is
/// read again whenever `generation().credentials` moves (a key added by another instance, or by
/// `migrate`, notifies like a credential does), so every instance signs with the same key and publishes
/// the same set.
public final class CertificateKeyring: Sendable {
    /// What a server uses now.
    struct Keys: Sendable {
        /// Signs new certificates.
        let signer: DeviceCertificateKey
        /// The body of `GET /api/sync/device-cert-keys`: `{"keys":[<JWK>, …]}`, every key.
        let published: SharedResponse
        let keyIds: [String]
    }

    private struct State {
        var keys: Keys
        var generation: StorageGeneration?
    }

    private let state: Mutex<State>
    private let load: (@Sendable () throws -> [DeviceCertificateKey])?

    /// One key that never changes (a single box's data folder key).
    public init(_ key: DeviceCertificateKey) {
        state = Mutex(State(keys: Self.keys([key])))
        load = nil
    }

    /// The keys `load` returns (oldest first: the first signs), read now and again whenever the
    /// generation's `credentials` counter moves.
    /// - Throws: what `load` throws, and `ServerError(.storage)` when it returns no key.
    public init(loading load: @escaping @Sendable () throws -> [DeviceCertificateKey]) throws {
        let keys = try load()
        guard !keys.isEmpty else { throw ServerError(.storage, "no device certificate key in the database") }
        state = Mutex(State(keys: Self.keys(keys)))
        self.load = load
    }

    /// The keys at `generation` (re-read when its `credentials` counter moved since the last read). Keys
    /// are only ever added, so when they cannot be read (the database is away) the set held is still
    /// right to publish and sign with; the next call tries again.
    func keys(at generation: StorageGeneration) -> Keys {
        let (held, seen) = state.withLock { ($0.keys, $0.generation) }
        guard let load, seen?.credentials != generation.credentials else { return held }
        guard let loaded = try? load(), !loaded.isEmpty else { return held }
        let keys = Self.keys(loaded)
        state.withLock { state in
            state.keys = keys
            state.generation = generation
        }
        return keys
    }

    /// The key ids published now, the signer's first (for tests and messages).
    public var keyIds: [String] { state.withLock { $0.keys.keyIds } }

    private static func keys(_ keys: [DeviceCertificateKey]) -> Keys {
        let body = "{\"keys\":[" + keys.map(\.jwk).joined(separator: ",") + "]}\n"
        return Keys(
            signer: keys[0], published: SharedResponse(SyncAnswers.json(200, Array(body.utf8), cacheControl: "public, max-age=300")),
            keyIds: keys.map(\.keyId))
    }
}
