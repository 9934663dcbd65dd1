import Foundation
import PulseCore
import PulseSystem
import Synchronization

/// What `Watcher` reports, as it happens.
public enum WatchUpdate: Sendable {
    /// The event stream is open (again).
    case connected(attempt: Int)
    case state(state: String, allowDownload: Bool, receivedAt: Double)
    case advance(maxShown: Int, deckVersion: Int, receivedAt: Double)
    case manifest(packageVersion: String, changed: Bool, receivedAt: Double)
    /// A sync ran because the manifest changed.
    case synced(SyncReport)
    /// Keys fetched after an event received at `eventAt`; in hand at `keyAt` (both Unix seconds, this clock).
    case keys(deckVersion: Int, released: [Int], eventAt: Double, keyAt: Double)
    /// A slide newly opened with a key just released: decrypted in memory, `bytes` of plaintext, never written.
    case unlocked(slide: Int, deckVersion: Int, bytes: Int, kind: SlideKind, eventAt: Double, keyAt: Double)
    /// Something went wrong; the watch goes on.
    case problem(String)
    /// The stream ended; it is opened again after `retryAfter` seconds.
    case disconnected(reason: String, retryAfter: Double)
}

/// `watch`: follows the session's event stream (`GET /api/sync/events`, Server-Sent Events) and, on every
/// `advance` and `state`, fetches the released keys and opens (in memory) each slide newly released; on a
/// `manifest` event naming another version than the cached one, syncs first (as the app does). Reconnects
/// with `Last-Event-ID`. Returns once cancelled, or after the session's end with `untilEnded`.
public final class Watcher: Sendable {
    public struct Options: Sendable {
        public var autoSync = true
        public var untilEnded = false
        public var assetsBase: URL?
        /// Seconds before reconnecting when the server names no `retry:`.
        public var reconnectDelay = 1.0

        public init() {}
    }

    let session: String
    let client: SyncClient
    let cache: DeviceCache
    let options: Options
    let report: @Sendable (WatchUpdate) -> Void

    public init(session: String, client: SyncClient, cache: DeviceCache, options: Options, report: @escaping @Sendable (WatchUpdate) -> Void) {
        self.session = session
        self.client = client
        self.cache = cache
        self.options = options
        self.report = report
    }

    private enum Item: Sendable {
        case head(Int)
        case event(ServerSentEvent, receivedAt: Double)
        case ended(String?, retry: Int?)
    }

    /// What the watch knows between events.
    private struct Known {
        var deckVersion: Int?
        var slides = Set<Int>()
    }

    /// Runs until `cancellation` fires (returns normally) or, with `untilEnded`, the session ended.
    /// - Throws: `DeviceError` when the server refuses the stream (the flat 404: revoked, out of scope).
    public func run(cancellation: Cancellation) throws {
        var lastEventId: String?
        var known = Known()
        var attempt = 0
        while !cancellation.isCancelled {
            attempt += 1
            let queue = ItemQueue<Item>()
            let stream = Cancellation()
            let link = cancellation.onCancel { stream.cancel() }
            defer { cancellation.remove(link) }
            var headers: [(name: String, value: String)] = [("Accept", "text/event-stream")]
            if let lastEventId { headers.append(("Last-Event-ID", lastEventId)) }
            let client = self.client.forStreaming, target = "/api/sync/events?session=\(session)", requestHeaders = headers
            Thread {
                let parser = Mutex(ServerSentEventParser())
                let refused = Mutex<[UInt8]?>(nil)
                do {
                    try client.signedExchange("GET", target, headers: requestHeaders, cancellation: stream) { event in
                        switch event {
                        case let .head(status, _):
                            if status != 200 { refused.withLock { $0 = [] } }
                            queue.push(.head(status))
                        case let .data(bytes):
                            if refused.withLock({ $0 != nil }) { refused.withLock { $0! += bytes }; return }
                            let receivedAt = Date().timeIntervalSince1970
                            for parsed in parser.withLock({ $0.feed(bytes) }) { queue.push(.event(parsed, receivedAt: receivedAt)) }
                        }
                    }
                    queue.push(.ended(nil, retry: parser.withLock { $0.retryMilliseconds }))
                } catch {
                    queue.push(.ended("\(error)", retry: parser.withLock { $0.retryMilliseconds }))
                }
            }.start()
            var status = 0
            var ended = false
            while !ended {
                guard let first = queue.pop(cancellation: cancellation) else { stream.cancel(); return }
                // Everything already queued is handled together: a burst of advances costs one key fetch.
                var batch = [first] + queue.drain()
                var trigger: Double?
                var sessionEnded = false
                var manifestChanged = false
                while !batch.isEmpty {
                    switch batch.removeFirst() {
                    case let .head(code):
                        status = code
                        if code == 200 { report(.connected(attempt: attempt)) }
                    case let .event(event, receivedAt):
                        if let id = event.id { lastEventId = id }
                        let data = try? JSONValue.parse(Array(event.data.utf8))
                        switch event.event {
                        case "state":
                            let state = data?["state"]?.stringValue ?? "?"
                            report(.state(state: state, allowDownload: data?["allowDownload"] == .bool(true), receivedAt: receivedAt))
                            trigger = min(trigger ?? receivedAt, receivedAt)
                            if state == "ended" { sessionEnded = true }
                        case "advance":
                            report(.advance(maxShown: data?["maxShown"]?.intValue ?? -1, deckVersion: data?["deckVersion"]?.intValue ?? -1, receivedAt: receivedAt))
                            trigger = min(trigger ?? receivedAt, receivedAt)
                        case "manifest":
                            let version = data?["packageVersion"]?.stringValue ?? ""
                            let cached = (try? cache.sessionManifest(session))??.packageVersion
                            report(.manifest(packageVersion: version, changed: version != cached, receivedAt: receivedAt))
                            if version != cached {
                                manifestChanged = true
                                trigger = min(trigger ?? receivedAt, receivedAt)
                            }
                        default:
                            break
                        }
                    case let .ended(reason, retry):
                        ended = true
                        if status != 200 && status != 0 {
                            stream.cancel()
                            throw DeviceError(.server, "GET /api/sync/events?session=\(session): the server answered \(status)"
                                + (status == 404 ? " (the flat 404: a revoked device, or a session outside this device's scope)" : ""))
                        }
                        let delay = retry.map { Double($0) / 1000 } ?? options.reconnectDelay
                        report(.disconnected(reason: reason ?? "the server closed the stream", retryAfter: delay))
                        if !cancellation.sleep(delay) { return }
                    }
                }
                if manifestChanged && options.autoSync { syncNow() }
                if let trigger { refreshKeys(eventAt: trigger, known: &known) }
                if sessionEnded && options.untilEnded {
                    stream.cancel()
                    return
                }
            }
        }
    }

    private func syncNow() {
        do {
            let synced = try Syncer(cache: cache, client: client, assetsBase: options.assetsBase).sync(.session(session))
            report(.synced(synced))
            synced.refusals.forEach { report(.problem("sync: \($0)")) }
        } catch {
            report(.problem("sync: \(error)"))
        }
    }

    /// Fetches the keys and opens each slide that is newly released.
    private func refreshKeys(eventAt: Double, known: inout Known) {
        do {
            var keys = try ReleasedKeys.fetch(session: session, client: client, answers: AnswerGuard(folder: cache.folder, client: client))
            var keyAt = Date().timeIntervalSince1970
            var manifest = try cache.sessionManifest(session)
            if manifest?.deckVersion != keys.deckVersion && options.autoSync {
                syncNow()
                manifest = try cache.sessionManifest(session)
                if manifest?.deckVersion != keys.deckVersion {
                    keys = try ReleasedKeys.fetch(session: session, client: client, answers: AnswerGuard(folder: cache.folder, client: client))
                    keyAt = Date().timeIntervalSince1970
                }
            }
            report(.keys(deckVersion: keys.deckVersion, released: keys.slides, eventAt: eventAt, keyAt: keyAt))
            guard let manifest else {
                report(.problem("no cached manifest for session \(session): run pulse-device sync --session \(session)"))
                return
            }
            try keys.check(against: manifest)
            if known.deckVersion != keys.deckVersion {
                known = Known(deckVersion: keys.deckVersion)
            }
            for n in keys.slides where !known.slides.contains(n) {
                let plaintext = try keys.open(slide: n, of: manifest, cache: cache)
                report(.unlocked(slide: n, deckVersion: keys.deckVersion, bytes: plaintext.count, kind: SlideKind.of(plaintext), eventAt: eventAt, keyAt: keyAt))
                known.slides.insert(n)
            }
        } catch {
            report(.problem("\(error)"))
        }
    }
}

/// A blocking queue between the stream's thread and the watcher's.
private final class ItemQueue<Item: Sendable>: Sendable {
    private let items = Condition<[Item]>([])

    func push(_ item: Item) {
        items.withLock(waking: .one) { $0.append(item) }
    }

    /// The next item, waiting for it; nil once `cancellation` fired.
    func pop(cancellation: Cancellation) -> Item? {
        while true {
            if let item = items.wait(until: { !$0.isEmpty }, timeout: 0.05, { $0.isEmpty ? nil : $0.removeFirst() }) { return item }
            if cancellation.isCancelled { return nil }
        }
    }

    /// Everything queued now, without waiting.
    func drain() -> [Item] {
        items.withLock { items in
            defer { items = [] }
            return items
        }
    }
}
