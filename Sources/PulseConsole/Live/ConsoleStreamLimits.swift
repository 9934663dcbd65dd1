import PulseHTTPServer
import Synchronization

/// The caps on the console's own event streams, the clicker's and the live view's together: each is a
/// connection, so a staff token must not be able to hold the server's connection slots. At most `perSession`
/// streams are open per console session (a signed-in browser) and `perToken` per staff token across all its
/// console sessions; a tab or two per page is normal, so a real staff member never meets either cap.
///
/// The stream past a cap stays: it is the page the person opened last, the one in front of them. The oldest
/// stream of that console session (or token) goes instead: it gets `event: ended` with
/// `{"reason":"tooManyStreams"}` and is closed. The console's script stops that page's `EventSource` on
/// `ended` (so it does not reconnect and push out another page in turn) and says why on the page. A client
/// that reconnects anyway only ever pushes out its own oldest stream: the count stays at the cap.
///
/// Holding every console stream with its console session and token, it also ends those whose sign-in no
/// longer holds (sign-out, expiry, a revoked token): `endSignedOut`, on the event hub's ticks.
final class ConsoleStreamLimits: Sendable {
    private struct Entry {
        let stream: HTTPEventStream
        let consoleSession: String
        let tokenHash: [UInt8]
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// Stream keys in the order they opened, per console session and per token hash.
        var bySession: [String: [ObjectIdentifier]] = [:]
        var byToken: [[UInt8]: [ObjectIdentifier]] = [:]
        /// When `endSignedOut` last looked (the clock's seconds).
        var lastAccessCheck = 0.0

        /// Forgets `key` everywhere; its stream, if it was counted.
        mutating func remove(_ key: ObjectIdentifier) -> HTTPEventStream? {
            guard let entry = entries.removeValue(forKey: key) else { return nil }
            bySession[entry.consoleSession]?.removeAll { $0 == key }
            if bySession[entry.consoleSession]?.isEmpty == true { bySession[entry.consoleSession] = nil }
            byToken[entry.tokenHash]?.removeAll { $0 == key }
            if byToken[entry.tokenHash]?.isEmpty == true { byToken[entry.tokenHash] = nil }
            return entry.stream
        }
    }

    /// Open console streams per console session, at most.
    let perSession: Int
    /// Open console streams per staff token (all its console sessions), at most.
    let perToken: Int
    private let state = Mutex(State())
    private let isStillSignedIn: @Sendable (_ consoleSession: String, _ tokenHash: [UInt8]) -> Bool

    /// The headers of every console stream. `Connection: close`: a stream that ends (pushed out, signed out)
    /// gives its connection back at once, not after the keep-alive's idle timeout.
    static let headers = [
        HTTPHeader("Content-Type", "text/event-stream"), HTTPHeader("X-Accel-Buffering", "no"), HTTPHeader("Connection", "close"),
    ]

    /// The `ended` event of a stream pushed out by a newer one.
    static let tooManyStreams = Array("event: ended\ndata: {\"reason\":\"tooManyStreams\"}\n\n".utf8)
    /// The `ended` event of a stream whose console session or token no longer holds.
    static let signedOut = Array("event: ended\ndata: {\"reason\":\"signedOut\"}\n\n".utf8)

    init(perSession: Int, perToken: Int, isStillSignedIn: @escaping @Sendable (_ consoleSession: String, _ tokenHash: [UInt8]) -> Bool) {
        self.perSession = max(1, perSession)
        self.perToken = max(1, perToken)
        self.isStillSignedIn = isStillSignedIn
    }

    /// Counts `stream`, just opened by `consoleSession` (signed in with the token whose hash is `tokenHash`),
    /// and ends the oldest streams of that session and that token beyond their caps (never `stream` itself).
    func admit(_ stream: HTTPEventStream, consoleSession: String, tokenHash: [UInt8]) {
        let key = ObjectIdentifier(stream)
        let pushedOut: [HTTPEventStream] = state.withLock { state in
            guard state.entries[key] == nil else { return [] }
            state.entries[key] = Entry(stream: stream, consoleSession: consoleSession, tokenHash: tokenHash)
            state.bySession[consoleSession, default: []].append(key)
            state.byToken[tokenHash, default: []].append(key)
            var out: [HTTPEventStream] = []
            while let keys = state.bySession[consoleSession], keys.count > perSession, let oldest = keys.first {
                if let old = state.remove(oldest) { out.append(old) }
            }
            while let keys = state.byToken[tokenHash], keys.count > perToken, let oldest = keys.first {
                if let old = state.remove(oldest) { out.append(old) }
            }
            return out
        }
        for old in pushedOut {
            old.send(Self.tooManyStreams)
            old.close()
        }
    }

    /// Sends `ended` to the streams whose console session or token no longer holds, and closes them: at most
    /// every 2 seconds of `now` (the hub's watcher calls it on every tick, 0.1 s by default), so a sign-out
    /// ends its pages' streams within a few seconds without a look per tick.
    func endSignedOut(now: Double) {
        let open: [Entry] = state.withLock { state in
            guard !state.entries.isEmpty, now - state.lastAccessCheck >= 2 else { return [] }
            state.lastAccessCheck = now
            return Array(state.entries.values)
        }
        for entry in open where !isStillSignedIn(entry.consoleSession, entry.tokenHash) {
            entry.stream.send(Self.signedOut)
            entry.stream.close()
        }
    }

    /// The stream ended (its `onEnd`): it no longer counts.
    func remove(_ stream: HTTPEventStream) {
        _ = state.withLock { $0.remove(ObjectIdentifier(stream)) }
    }

    /// Open console streams of `consoleSession`.
    func count(consoleSession: String) -> Int { state.withLock { $0.bySession[consoleSession]?.count ?? 0 } }

    /// Open console streams of the staff token whose hash is `tokenHash`.
    func count(tokenHash: [UInt8]) -> Int { state.withLock { $0.byToken[tokenHash]?.count ?? 0 } }
}
