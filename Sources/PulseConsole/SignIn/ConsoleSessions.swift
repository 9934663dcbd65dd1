import PulseCrypto
import Synchronization

/// The console's signed-in sessions, in memory (a restart signs everyone out): a 256-bit random id in the
/// cookie, and here, under the id's SHA-256, the staff token's hash, the CSRF token bound to the session and
/// its times. The token itself is never kept; the principal is resolved from its hash on every request.
///
/// A session ends after `idleSeconds` without a request, `maxAgeSeconds` after sign-in, at "Sign out", or
/// when its token no longer resolves (revoked, expired).
final class ConsoleSessions: Sendable {
    struct Entry: Sendable {
        let tokenHash: [UInt8]
        let csrfToken: String
        let createdAt: Double
        var lastSeen: Double
        /// The one-time notice of the next page (after a form's redirect).
        var notice: String?
    }

    private let sessions = Mutex<[[UInt8]: Entry]>([:])
    let idleSeconds: Double
    let maxAgeSeconds: Double
    let capacity: Int

    init(idleSeconds: Double, maxAgeSeconds: Double, capacity: Int) {
        self.idleSeconds = idleSeconds
        self.maxAgeSeconds = maxAgeSeconds
        self.capacity = max(1, capacity)
    }

    /// A new session for the token with `tokenHash`: its id (for the cookie) and CSRF token.
    func create(tokenHash: [UInt8], now: Double) throws -> (id: String, csrf: String) {
        let id = Base64URL.encode(try SecureRandom.bytes(32))
        let csrf = Base64URL.encode(try SecureRandom.bytes(32))
        let entry = Entry(tokenHash: tokenHash, csrfToken: csrf, createdAt: now, lastSeen: now)
        sessions.withLock { sessions in
            if sessions.count >= capacity {
                sessions = sessions.filter { isAlive($0.value, now: now) }
                if sessions.count >= capacity, let oldest = sessions.min(by: { $0.value.lastSeen < $1.value.lastSeen }) {
                    sessions[oldest.key] = nil
                }
            }
            sessions[Self.key(id)] = entry
        }
        return (id, csrf)
    }

    /// The live session with cookie value `id`, touched (its idle time starts over); nil when unknown or
    /// expired (then it is forgotten).
    func resolve(_ id: String, now: Double) -> Entry? {
        guard id.utf8.count == 43 else { return nil }
        let key = Self.key(id)
        return sessions.withLock { sessions in
            guard var entry = sessions[key] else { return nil }
            guard isAlive(entry, now: now) else {
                sessions[key] = nil
                return nil
            }
            entry.lastSeen = now
            sessions[key] = entry
            return entry
        }
    }

    /// Whether the session with cookie value `id` is live, without touching it (an open event stream is not
    /// activity).
    func isLive(_ id: String, now: Double) -> Bool {
        let key = Self.key(id)
        return sessions.withLock { $0[key].map { isAlive($0, now: now) } ?? false }
    }

    /// Ends the session with cookie value `id`.
    func end(_ id: String) {
        let key = Self.key(id)
        _ = sessions.withLock { $0.removeValue(forKey: key) }
    }

    /// Sets the notice the session's next page shows once.
    func setNotice(_ id: String, _ notice: String?) {
        let key = Self.key(id)
        sessions.withLock { $0[key]?.notice = notice }
    }

    /// The pending notice, cleared.
    func takeNotice(_ id: String) -> String? {
        let key = Self.key(id)
        return sessions.withLock { sessions in
            defer { sessions[key]?.notice = nil }
            return sessions[key]?.notice
        }
    }

    /// Sessions held now (live or not yet pruned).
    var count: Int { sessions.withLock { $0.count } }

    private func isAlive(_ entry: Entry, now: Double) -> Bool {
        now - entry.lastSeen < idleSeconds && now - entry.createdAt < maxAgeSeconds && now >= entry.createdAt - 5
    }

    private static func key(_ id: String) -> [UInt8] { SHA256.hash(Array(id.utf8)) }
}
