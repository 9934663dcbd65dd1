import PulseCore
import PulseHTTPServer
import PulseServerStorage
import PulseSyncAPI
import Synchronization

/// The live view's Server-Sent Events (`GET /console/sessions/<id>/live/events`): the same machinery as
/// the clicker's `ClickerFeed` (no thread of its own, none per stream: it rides on the event hub's watcher,
/// `EventHub.onTick`, and each stream is an `HTTPEventStream` suspended between events).
///
/// On each tick (every `eventPollSeconds`, 0.1 s by default), for each watched session it takes the diag
/// samples stored since the last tick (`LiveSamples`) and sends one `devices` event with only those rows,
/// plus the count of the session's open device event streams when it moved. A stream whose console session
/// ended gets `ended` and is closed. Each stream counts against its console session's and staff token's caps
/// (`ConsoleStreamLimits`, shared with the clicker's streams).
final class LiveFeed: Sendable {
    private struct Subscriber {
        let stream: HTTPEventStream
    }

    private struct State {
        var bySession: [String: [ObjectIdentifier: Subscriber]] = [:]
        var streams: [String: Int] = [:]
        /// Device names by id: a device's name never changes after enrollment, so each is read once.
        var names: [String: String] = [:]
    }

    private let state = Mutex(State())
    private let sync: SyncAPI
    private let limits: ConsoleStreamLimits

    init(sync: SyncAPI, limits: ConsoleStreamLimits) {
        self.sync = sync
        self.limits = limits
        sync.hub.onTick { [weak self] in self?.tick() }
    }

    /// Open live-view streams.
    var count: Int { state.withLock { $0.bySession.values.reduce(0) { $0 + $1.count } } }

    /// A new stream for session `id`: first the rows of samples stored since `since` (the page's render
    /// time, so nothing between the render and the stream is lost) and the stream count.
    func open(session id: String, since: Int64, consoleSession: String, tokenHash: [UInt8]) throws -> HTTPEventStream {
        let limits = self.limits
        let stream = HTTPEventStream(heartbeat: Array(":\n".utf8), maxPendingBytes: 256 << 10) { [weak self] stream, _ in
            limits.remove(stream)
            self?.remove(stream, session: id)
        }
        // Watch first, then read: a sample stored in between comes twice (the same row), never not at all.
        sync.liveSamples.watch(session: id)
        let first: [DiagSample]
        do { first = try sync.storage.latestSamples(sessionId: id, since: since) } catch {
            sync.liveSamples.unwatch(session: id)
            throw error
        }
        let streams = sync.hub.streamCount(session: id)
        state.withLock { state in
            state.bySession[id, default: [:]][ObjectIdentifier(stream)] = Subscriber(stream: stream)
            state.streams[id] = streams
        }
        stream.send(Array("retry: \(sync.configuration.eventRetryMilliseconds)\n\n".utf8) + (try event(first, streams: streams, now: sync.seconds(sync.clock()))))
        limits.admit(stream, consoleSession: consoleSession, tokenHash: tokenHash)
        return stream
    }

    private func remove(_ stream: HTTPEventStream, session id: String) {
        let removed: Bool = state.withLock { state in
            guard state.bySession[id]?.removeValue(forKey: ObjectIdentifier(stream)) != nil else { return false }
            if state.bySession[id]?.isEmpty == true {
                state.bySession[id] = nil
                state.streams[id] = nil
            }
            return true
        }
        if removed { sync.liveSamples.unwatch(session: id) }
    }

    /// One look (the hub's watcher thread).
    func tick() {
        let now = sync.clock()
        let watched = state.withLock { Array($0.bySession.keys) }
        guard !watched.isEmpty else { return }
        for id in watched {
            let samples = sync.liveSamples.take(session: id)
            let streams = sync.hub.streamCount(session: id)
            let targets: [HTTPEventStream] = state.withLock { state in
                let moved = state.streams[id] != streams
                state.streams[id] = streams
                guard moved || !samples.isEmpty else { return [] }
                return state.bySession[id].map { $0.values.map(\.stream) } ?? []
            }
            guard !targets.isEmpty, let bytes = try? event(samples, streams: streams, now: sync.seconds(now)) else { continue }
            for stream in targets { stream.send(bytes) }
        }
    }

    private func name(of deviceId: String) throws -> String {
        if let known = state.withLock({ $0.names[deviceId] }) { return known }
        let name = try sync.storage.device(id: deviceId)?.name ?? ""
        state.withLock { $0.names[deviceId] = name }
        return name
    }

    /// `event: devices` with the rows of `samples` (JSON: every device string is data, set as text by the
    /// script) and the stream count.
    func event(_ samples: [DiagSample], streams: Int, now: Int64) throws -> [UInt8] {
        var rows: [JSONValue] = []
        for sample in samples.sorted(by: { $0.deviceId < $1.deviceId }) where DevicesPage.isSafeId(sample.deviceId) {
            rows.append(["id": .string(sample.deviceId), "cells": .array(LiveRow(sample, name: try name(of: sample.deviceId)).cells.map { .string($0) })])
        }
        let data: JSONValue = ["rows": .array(rows), "streams": .int(streams)]
        return Array("event: devices\ndata: ".utf8) + data.canonicalBytes + [0x0A, 0x0A]
    }
}
