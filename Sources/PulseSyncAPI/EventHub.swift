import Foundation
import PulseCore
import PulseHTTPServer
import PulseServerStorage
import PulseSystem
import Synchronization

/// The one fan-out of Server-Sent Events in a process: every open `GET /api/sync/events` stream, by
/// session, fed by one watcher thread.
///
/// The watcher is fed by storage, not by the code that made a change: it asks `generation()` every
/// `eventPollSeconds` (or at once when this process's staff API pokes it, or when storage announces a
/// change made elsewhere: PostgreSQL's NOTIFY, `ServerStorage.observeChanges`), and when sessions or
/// content moved it reads each watched session's change log after its cursor. So an advance made by
/// another instance on the same database, or by `pulse-server admin` in a shell, reaches the streams just
/// the same: on PostgreSQL as soon as its notification arrives, on SQLite at the next poll.
///
/// Events (each with `id:` = the session's change sequence, so `Last-Event-ID` resumes):
/// - `advance` `{"maxShown","deckVersion"}`: the live frontier moved; fetch keys now.
/// - `state` `{"state","allowDownload","venueLocked"}`: the state or a release setting changed; fetch keys.
/// - `manifest` `{"packageVersion","deckVersion"}`: the manifest this device sees changed (an import, or a
///   gated resource released by an advance, a state change or the server's clock); fetch it (a conditional
///   GET). Sent to each stream when its last known version differs, so a clock-released resource (which has
///   no change-log entry) reaches everyone once.
///
/// Each event is formatted once per change and written to every stream with one `send` (a resume of a
/// suspended connection; no thread per stream). A revoked device's streams are closed.
public final class EventHub: Sendable {
    private struct Subscriber {
        let stream: HTTPEventStream
        let deviceId: String
        /// The registration token that enrolled the device (its listing id), whose streams are capped.
        let token: String?
        /// The last change sequence this stream has (through its snapshot or events).
        var sequence: Int64
        /// The manifest version it was last told.
        var manifest: String
    }

    private struct Watched {
        var subscribers: [ObjectIdentifier: Subscriber] = [:]
        /// Each device's streams, oldest first (the few a device may hold).
        var byDevice: [String: [ObjectIdentifier]] = [:]
        /// The highest change sequence read from the log for this session.
        var cursor: Int64
        /// When a gated resource's `releaseAt` comes due (the manifest must be looked at then).
        var nextClockChange: Int64?
    }

    let cache: SyncCache
    let configuration: SyncConfiguration
    let clock: @Sendable () -> Double
    let alarm: @Sendable (String) -> Void
    private struct State {
        var watched: [String: Watched] = [:]
        var generation: StorageGeneration?
        var count = 0
        /// Streams open per registration token (listing id), across sessions.
        var byToken: [String: Int] = [:]
    }
    private let state = Mutex(State())
    /// The watcher thread's: poked, told to run or stop, and `finished` once it stopped.
    private let wake = Condition((poked: false, running: false, finished: false))
    /// The watcher thread's own (in a Mutex only because the hub is shared).
    private let watcher = Mutex((lastPrune: 0.0, lastAlarm: String?.none))
    /// Told each live advance and its delivery to each stream (metrics); nil measures nothing.
    let observer: (any SyncObserver)?
    /// With an observer: when this instance first poked the hub since the last delivery (`clock()` seconds),
    /// where an advance's delivery latency starts.
    private let pokedAt = Mutex<Double?>(nil)
    /// Called after each tick (`onTick`).
    private let tickObservers = Mutex<[@Sendable () -> Void]>([])
    /// Called when stored devices changed (`onDevicesChanged`): a revocation, by any process.
    private let devicesObservers = Mutex<[@Sendable () throws -> Void]>([])

    init(
        cache: SyncCache, configuration: SyncConfiguration, clock: @escaping @Sendable () -> Double, alarm: @escaping @Sendable (String) -> Void,
        observer: (any SyncObserver)? = nil
    ) {
        self.cache = cache
        self.configuration = configuration
        self.clock = clock
        self.alarm = alarm
        self.observer = observer
    }

    var streamCount: Int { state.withLock { $0.count } }

    /// Streams open on session `id`.
    public func streamCount(session id: String) -> Int { state.withLock { $0.watched[id]?.subscribers.count ?? 0 } }

    /// Streams open by the devices of registration token `listingId`.
    func streamCount(token listingId: String) -> Int { state.withLock { $0.byToken[listingId] ?? 0 } }

    // MARK: The watcher thread

    func start() {
        let started: Bool = wake.withLock { wake in
            defer {
                if !wake.running { wake.finished = false }
                wake.running = true
            }
            return wake.running
        }
        guard !started else { return }
        // Woken by the listener's thread, so an advance through another instance costs no polling delay.
        cache.storage.observeChanges { [weak self] kinds in
            if !kinds.isDisjoint(with: [.sessions, .content, .devices]) { self?.wakeUp() }
        }
        let thread = Thread { [self] in
            while wake.withLock({ $0.running }) {
                tick()
                wake.wait(until: { $0.poked || !$0.running }, timeout: configuration.eventPollSeconds) { $0.poked = false }
            }
            wake.withLock(waking: .all) { $0.finished = true }
        }
        thread.name = "sync-events"
        thread.start()
    }

    func stop() {
        let wasRunning: Bool = wake.withLock(waking: .all) { wake in
            defer { wake.running = false }
            return wake.running
        }
        if wasRunning { wake.wait(until: { $0.finished }, timeout: 5) { _ in } }
    }

    /// Look at storage now (this process just changed something).
    public func poke() {
        if observer != nil {
            let now = clock()
            pokedAt.withLock { $0 = $0 ?? now }
        }
        wakeUp()
    }

    /// Look at storage now (another process changed something).
    private func wakeUp() {
        wake.withLock(waking: .one) { $0.poked = true }
    }

    // MARK: Streams

    /// Adds `stream` for `device` on session `id`, and queues its first bytes: `retry:`, then what changed
    /// after `lastEventId` (a snapshot of the state when there is none or it is too old), then the manifest
    /// version. Done under the hub's lock, so no change can slip between the snapshot and the stream's
    /// first event.
    ///
    /// A stream resumed with `lastEventId` replaces the device's oldest stream on this session (a reconnect).
    /// A device enrolled with a registration token (`token`, its listing id) counts against that token's cap
    /// (`maxStreams`, across sessions, in this process): at the cap, a device that already holds a stream on
    /// this session replaces its oldest one (a reconnect), any other stream is refused.
    /// - Returns: false when refused for the token's cap (nothing was sent; the caller answers 429).
    @discardableResult
    func subscribe(
        _ stream: HTTPEventStream, device: String, session id: String, lastEventId: Int64?, token: String? = nil, maxStreams: Int = .max
    ) throws -> Bool {
        var extra: [HTTPEventStream] = []
        let accepted: Bool = try state.withLock { state in
            let mine = state.watched[id]?.byDevice[device] ?? []
            let full = token.map { (state.byToken[$0] ?? 0) >= maxStreams } ?? false
            if full && mine.isEmpty { return false }
            // Read storage itself (not the cache): the sequence must be at least the watcher's cursor.
            guard let session = try cache.storage.session(id: id) else { stream.close(); return true }
            let now = Int64(clock().rounded(.down))
            let manifest = try cache.manifest(session, now: now)
            var bytes = Array("retry: \(configuration.eventRetryMilliseconds)\n\n".utf8)
            let sequence = session.changeSequence
            if let last = lastEventId, last >= 0, last <= sequence, sequence - last <= 256 {
                let changes = try cache.storage.changes(sessionId: id, after: last, limit: 256).filter { $0.sequence <= sequence }
                for change in changes { bytes += Self.event(for: change, session: session) }
            } else {
                bytes += Self.event("state", id: sequence, data: Self.state(session.state, session))
                if let shown = session.maxShown {
                    bytes += Self.event("advance", id: sequence, data: ["maxShown": .int(shown), "deckVersion": .int(session.deckVersion)])
                }
            }
            let version = manifest?.packageVersion ?? session.packageVersion
            bytes += Self.event("manifest", id: sequence, data: ["packageVersion": .string(version), "deckVersion": .int(session.deckVersion)])
            stream.send(bytes)

            // Taken out of the dictionary while it changes, so its subscribers are never copied (10,000
            // streams opening one after the other would copy them 10,000 times).
            var entry = state.watched.removeValue(forKey: id) ?? Watched(cursor: sequence, nextClockChange: nil)
            if entry.subscribers.isEmpty, let content = try cache.content(id) {
                entry.nextClockChange = Self.nextClockChange(content, now: now)
            }
            let key = ObjectIdentifier(stream)
            entry.subscribers[key] = Subscriber(stream: stream, deviceId: device, token: token, sequence: sequence, manifest: version)
            entry.byDevice[device, default: []].append(key)
            state.count += 1
            if let token { state.byToken[token, default: 0] += 1 }
            // A device holds a few streams at most, the oldest go. A stream resumed with Last-Event-ID is the
            // device coming back after a drop, whose old stream the server may not have noticed yet (a phone
            // that lost the Wi-Fi sends no reset; a suspended stream is looked at only at its heartbeat): it
            // replaces the device's oldest stream, so a venue-wide reconnect wave does not hold every stream
            // twice. So does any new stream when the device's token is at its cap.
            let replaces = full || lastEventId != nil
            let allowed = replaces ? max(1, min(mine.count, configuration.streamsPerDevice)) : configuration.streamsPerDevice
            if let held = entry.byDevice[device], held.count > allowed {
                extra = held.prefix(held.count - allowed).compactMap { entry.subscribers[$0]?.stream }
            }
            state.watched[id] = entry
            return true
        }
        for old in extra { old.close() }
        return accepted
    }

    /// The stream ended (its `onEnd`).
    func remove(_ stream: HTTPEventStream, session id: String) {
        state.withLock { state in
            let key = ObjectIdentifier(stream)
            guard var entry = state.watched.removeValue(forKey: id) else { return }
            defer { if !entry.subscribers.isEmpty { state.watched[id] = entry } }
            guard let subscriber = entry.subscribers.removeValue(forKey: key) else { return }
            state.count -= 1
            if let token = subscriber.token {
                state.byToken[token] = (state.byToken[token] ?? 1) - 1
                if state.byToken[token] ?? 0 <= 0 { state.byToken[token] = nil }
            }
            entry.byDevice[subscriber.deviceId]?.removeAll { $0 == key }
            if entry.byDevice[subscriber.deviceId]?.isEmpty == true { entry.byDevice[subscriber.deviceId] = nil }
        }
    }

    // MARK: One look at storage

    /// Reads what changed and writes it to the streams, then tells the tick observers. Errors are reported
    /// once and retried next time.
    func tick() {
        do {
            try deliver()
            watcher.withLock { $0.lastAlarm = nil }
        } catch {
            let message = "event hub: \(error)"
            if message != watcher.withLock({ $0.lastAlarm }) { alarm(message) }
            watcher.withLock { $0.lastAlarm = message }
        }
        for observer in tickObservers.withLock({ $0 }) { observer() }
    }

    /// Calls `handler` on the watcher thread after each look at storage (every `eventPollSeconds`, and at
    /// once after a poke): the console's streams ride on it instead of a thread of their own. Keep it short.
    public func onTick(_ handler: @escaping @Sendable () -> Void) {
        tickObservers.withLock { $0.append(handler) }
    }

    /// Calls `handler` on the watcher thread when the tick finds stored devices changed (a revocation by
    /// the staff API, the admin command line or another instance), after it closed the revoked streams.
    func onDevicesChanged(_ handler: @escaping @Sendable () throws -> Void) {
        devicesObservers.withLock { $0.append(handler) }
    }

    private func deliver() throws {
        let poked = observer == nil ? nil : pokedAt.withLock { at in
            defer { at = nil }
            return at
        }
        let current = try cache.revalidate()
        let now = clock()
        let second = Int64(now.rounded(.down))
        if now - watcher.withLock({ $0.lastPrune }) > 60 {
            watcher.withLock { $0.lastPrune = now }
            try cache.storage.pruneReplayKeys(at: second)
        }
        let (previous, sessions) = state.withLock { state -> (StorageGeneration?, [(String, Int64, Int64?)]) in
            defer { state.generation = current }
            return (state.generation, state.watched.map { ($0.key, $0.value.cursor, $0.value.nextClockChange) })
        }
        let moved = previous?.sessions != current.sessions || previous?.content != current.content
        for (id, cursor, clockDue) in sessions where moved || (clockDue.map { second >= $0 } ?? false) {
            try deliver(session: id, after: cursor, now: second, poked: poked)
        }
        if previous != nil && previous?.devices != current.devices {
            try closeRevoked()
            for handler in devicesObservers.withLock({ $0 }) { try handler() }
        }
    }

    /// The changes of session `id` after `cursor`, and the manifest version, to every stream that lacks them.
    private func deliver(session id: String, after cursor: Int64, now: Int64, poked: Double? = nil) throws {
        guard let session = try cache.session(id) else { return }
        let changes = try cache.storage.changes(sessionId: id, after: cursor, limit: 1024)
        let events = changes.map { (sequence: $0.sequence, bytes: Self.event(for: $0, session: session)) }
        let last = max(cursor, changes.last?.sequence ?? cursor)
        let version = try cache.manifest(session, now: now)?.packageVersion ?? session.packageVersion
        let manifest = Self.event("manifest", id: last, data: ["packageVersion": .string(version), "deckVersion": .int(session.deckVersion)])
        let nextClock = try cache.content(id).flatMap { Self.nextClockChange($0, now: now) }
        var outgoing: [(HTTPEventStream, [UInt8], advances: [Int64])] = []
        state.withLock { state in
            guard var entry = state.watched.removeValue(forKey: id) else { return }
            defer { state.watched[id] = entry }
            entry.cursor = max(entry.cursor, last)
            entry.nextClockChange = nextClock
            for (key, var subscriber) in entry.subscribers {
                var bytes: [UInt8] = []
                var advances: [Int64] = []
                for (event, change) in zip(events, changes) where event.sequence > subscriber.sequence {
                    bytes += event.bytes
                    if observer != nil, case .advance = change.event { advances.append(change.at) }
                }
                subscriber.sequence = max(subscriber.sequence, last)
                if subscriber.manifest != version {
                    bytes += manifest
                    subscriber.manifest = version
                }
                entry.subscribers[key] = subscriber
                if !bytes.isEmpty { outgoing.append((subscriber.stream, bytes, advances)) }
            }
        }
        guard let observer else {
            for (stream, bytes, _) in outgoing { stream.send(bytes) }
            return
        }
        for change in changes where change.sequence > cursor {
            if case .advance = change.event { observer.advanceSeen() }
        }
        // A tick that began just before the staff route's poke finds the change without it: the poke that came
        // meanwhile (left for the next tick) is then the start, rather than the change's whole second.
        let start = poked ?? pokedAt.withLock { $0 }
        for (stream, bytes, advances) in outgoing {
            // The time the event is handed to its stream, read before the hand-over: a thread preempted after
            // it would count time in which the device may already have the event.
            let sent = advances.isEmpty ? 0 : clock()
            stream.send(bytes)
            for at in advances { observer.advanceDelivered(seconds: max(0, sent - max(Double(at), start ?? 0))) }
        }
    }

    /// Closes the streams of devices that were revoked (or vanished).
    private func closeRevoked() throws {
        let subscribers = state.withLock { $0.watched.values.flatMap { $0.subscribers.values } }
        var verdicts: [String: Bool] = [:]
        for subscriber in subscribers {
            let revoked = try verdicts[subscriber.deviceId] ?? (cache.device(subscriber.deviceId).map(\.record.isRevoked) ?? true)
            verdicts[subscriber.deviceId] = revoked
            if revoked { subscriber.stream.close() }
        }
    }

    // MARK: Formatting

    static func event(_ name: String, id: Int64, data: JSONValue) -> [UInt8] {
        Array("id: \(id)\nevent: \(name)\ndata: ".utf8) + data.canonicalBytes + [0x0a, 0x0a]
    }

    static func state(_ state: SessionState, _ session: SessionRecord) -> JSONValue {
        ["state": .string(state.rawValue), "allowDownload": .bool(session.allowDownload), "venueLocked": .bool(!session.venueNetworks.isEmpty)]
    }

    /// The event a change log entry becomes (none for a rehearsal advance or a content change: the
    /// manifest event covers content).
    static func event(for change: SessionChange, session: SessionRecord) -> [UInt8] {
        switch change.event {
        case let .advance(shown, deck): event("advance", id: change.sequence, data: ["maxShown": .int(shown), "deckVersion": .int(deck)])
        case let .state(state): event("state", id: change.sequence, data: Self.state(state, session))
        case .settings: event("state", id: change.sequence, data: Self.state(session.state, session))
        case .rehearsalAdvance, .content: []
        }
    }

    /// The next moment a gated resource's `releaseAt` comes due.
    static func nextClockChange(_ content: SessionContent, now: Int64) -> Int64? {
        content.gated.compactMap { ReleasePolicy.nextClockChange($0.rule, now: now) }.min()
    }
}
