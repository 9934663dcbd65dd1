import PulseAnswerSignature
import PulseCrypto
import PulseServerStorage
import Synchronization

/// The keys that sign sync answers (`Pulse-Signature`, issue 21) and the schedule they sign by.
///
/// One box adopts its data folder's `answer-key.pem` into its database; instances sharing PostgreSQL keep
/// the keys there (`AnswerKeyStorage`). The set is read again whenever `generation().credentials` moves
/// (a rotation by `admin answer-key rotate` notifies like a credential does). At any moment the key that
/// signs is the newest whose `signsFrom` has come and whose `signsUntil` has not; every key is published
/// until its last signature has expired (`signsUntil` + the key's recorded TTL, which every server raised to
/// its own before signing: `AnswerKeyRecord.ttl`).
public final class AnswerKeyring: Sendable {
    private struct State {
        var keys: [AnswerKeyRecord]
        var generation: StorageGeneration?
    }

    private let state: Mutex<State>
    private let load: (@Sendable () throws -> [AnswerKeyRecord])?

    /// One key that never changes (tests, a server without a database of keys).
    public init(_ key: P256.PrivateKey) {
        state = Mutex(State(keys: [AnswerKeyRecord(privateKey: key, signsFrom: 0, signsUntil: nil, serial: 1)]))
        load = nil
    }

    /// The keys `load` returns, read now and again whenever the generation's `credentials` counter moves.
    /// - Throws: what `load` throws, and `ServerError(.storage)` when it returns no key.
    public init(loading load: @escaping @Sendable () throws -> [AnswerKeyRecord]) throws {
        let keys = try load()
        guard !keys.isEmpty else { throw ServerError(.storage, "no answer-signing key in the database") }
        state = Mutex(State(keys: keys))
        self.load = load
    }

    /// The keys at `generation` (re-read when its `credentials` counter moved). When they cannot be read
    /// (the database is away) the set held is still the one to sign with; the next call tries again.
    func keys(at generation: StorageGeneration) -> [AnswerKeyRecord] {
        let (held, seen) = state.withLock { ($0.keys, $0.generation) }
        guard let load, seen?.credentials != generation.credentials else { return held }
        guard let loaded = try? load(), !loaded.isEmpty else { return held }
        state.withLock { state in
            state.keys = loaded
            state.generation = generation
        }
        return loaded
    }

    /// The key ids held now, oldest first (for tests and messages).
    public var keyIds: [String] { state.withLock { $0.keys.map(\.kid) } }

    /// The key that signs at `now`: the newest whose schedule covers `now`; before any (a clock set back),
    /// the oldest.
    static func signer(_ keys: [AnswerKeyRecord], at now: Int64) -> AnswerKeyRecord? {
        keys.last { $0.signsFrom <= now && ($0.signsUntil.map { now < $0 } ?? true) } ?? keys.first
    }

    /// The keys published at `now` (each until its last signature expired: `signsUntil` + its recorded TTL, and
    /// never before this server's own `ttl` has passed), and the key set's generation.
    static func published(_ keys: [AnswerKeyRecord], at now: Int64, ttl: Int64) -> (keys: [AnswerKey], seq: Int) {
        let shown = keys.filter { $0.isPublished(at: now, atLeast: ttl) }
        return (
            shown.map { AnswerKey(publicKey: $0.privateKey.publicKey, signsFrom: Int($0.signsFrom), retiresAt: $0.retiresAt(atLeast: ttl).map(Int.init)) },
            Int(keys.map(\.serial).max() ?? 0)
        )
    }
}
