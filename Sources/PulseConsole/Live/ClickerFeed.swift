import Foundation
import PulseCore
import PulseHTTPServer
import PulseServerStorage
import PulseSyncAPI
import Synchronization

/// The console's Server-Sent Events (`GET /console/sessions/<id>/events`): each open clicker page's stream,
/// by session. No thread of its own and none per stream: it rides on the event hub's watcher
/// (`EventHub.onTick`, every `eventPollSeconds` and at once after a staff change), and each stream is an
/// `HTTPEventStream`, suspended in libmicrohttpd between events.
///
/// On each tick, when sessions or the key holders moved, each watched session's `Clicker` is computed once
/// and sent as a `clicker` event to the streams that have not seen that value. A stream whose console
/// session ended (sign-out, expiry, a revoked token) gets `ended` and is closed within a few seconds, by
/// `ConsoleStreamLimits.endSignedOut`. Each stream counts against its console session's and staff token's
/// caps (`ConsoleStreamLimits`, shared with the live view's streams).
final class ClickerFeed: Sendable {
    private struct Subscriber {
        let stream: HTTPEventStream
        var last: Clicker?
    }

    private struct State {
        var bySession: [String: [ObjectIdentifier: Subscriber]] = [:]
        var count = 0
        /// What the last tick looked at: nothing new, nothing to do.
        var seen: (sessions: Int64, holders: UInt64)?
    }

    private let state = Mutex(State())
    private let sync: SyncAPI
    private let limits: ConsoleStreamLimits

    init(sync: SyncAPI, limits: ConsoleStreamLimits) {
        self.sync = sync
        self.limits = limits
        sync.hub.onTick { [weak self] in self?.tick() }
    }

    /// Open console streams.
    var count: Int { state.withLock { $0.count } }

    /// A new stream for session `id`, its first event already queued.
    func open(session id: String, consoleSession: String, tokenHash: [UInt8]) throws -> HTTPEventStream {
        let limits = self.limits
        let stream = HTTPEventStream(heartbeat: Array(":\n".utf8), maxPendingBytes: 64 << 10) { [weak self] stream, _ in
            limits.remove(stream)
            self?.remove(stream, session: id)
        }
        guard let session = try sync.storage.session(id: id) else {
            stream.close()
            return stream
        }
        let clicker = Clicker(session, holders: sync.keyHolders)
        stream.send(Array("retry: \(sync.configuration.eventRetryMilliseconds)\n\n".utf8) + Self.event(clicker))
        state.withLock { state in
            state.bySession[id, default: [:]][ObjectIdentifier(stream)] = Subscriber(stream: stream, last: clicker)
            state.count += 1
        }
        limits.admit(stream, consoleSession: consoleSession, tokenHash: tokenHash)
        return stream
    }

    private func remove(_ stream: HTTPEventStream, session id: String) {
        state.withLock { state in
            guard state.bySession[id]?.removeValue(forKey: ObjectIdentifier(stream)) != nil else { return }
            state.count -= 1
            if state.bySession[id]?.isEmpty == true { state.bySession[id] = nil }
        }
    }

    /// One look (the hub's watcher thread).
    func tick() {
        let watched = state.withLock { Array($0.bySession.keys) }
        guard !watched.isEmpty else { return }
        guard let generation = try? sync.cache.revalidate() else { return }
        let holders = sync.keyHolders.version
        let fresh: Bool = state.withLock { state in
            defer { state.seen = (generation.sessions, holders) }
            return state.seen.map { $0.sessions != generation.sessions || $0.holders != holders } ?? true
        }
        guard fresh else { return }
        for id in watched {
            guard let session = try? sync.storage.session(id: id) else { continue }
            let clicker = Clicker(session, holders: sync.keyHolders)
            let bytes = Self.event(clicker)
            let targets: [HTTPEventStream] = state.withLock { state in
                guard var subscribers = state.bySession[id] else { return [] }
                var out: [HTTPEventStream] = []
                for (key, var subscriber) in subscribers where subscriber.last != clicker {
                    subscriber.last = clicker
                    subscribers[key] = subscriber
                    out.append(subscriber.stream)
                }
                state.bySession[id] = subscribers
                return out
            }
            for stream in targets { stream.send(bytes) }
        }
    }

    static func event(_ clicker: Clicker) -> [UInt8] {
        Array("event: clicker\ndata: ".utf8) + clicker.event.canonicalBytes + [0x0A, 0x0A]
    }
}
