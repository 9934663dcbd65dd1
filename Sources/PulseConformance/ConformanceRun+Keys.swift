import Foundation
import PulseCore
import PulseCrypto
import PulseDevice
import Synchronization

extension ConformanceRun {
    /// The keys answer's released slide numbers, and the answer.
    func releasedSlides(_ device: ConformanceDevice, _ session: String) throws -> (slides: [Int], json: JSONValue) {
        let answer = try signed("GET", "/api/sync/keys?session=\(session)", by: device)
        guard answer.status == 200, let json = answer.json, let released = json["released"]?.arrayValue else {
            throw Broken("GET /api/sync/keys?session=\(session) answered \(answer.summary)")
        }
        return (released.compactMap { $0["n"]?.intValue }, json)
    }

    /// §4: keys gated by the state machine (driven through the staff API), venue lock, download permission.
    func keyRules() {
        rule("keys.deck-version") { evidence in
            let device = try need(device, "a device")
            let session = try need(session, "a session")
            let (_, manifest) = try need(sessionManifest, "the session manifest")
            let (slides, json) = try releasedSlides(device, session)
            evidence.add("keys: deckVersion \(json["deckVersion"]?.intValue.map(String.init) ?? "none"), \(slides.count) released; manifest deckVersion \(manifest["deckVersion"]?.intValue ?? -1)")
            try expect(json["deckVersion"]?.intValue != nil && json["deckVersion"] == manifest["deckVersion"], "the keys are for another deck than the manifest's")
            try expect(slides.sorted() == slides && Set(slides).count == slides.count, "released slide numbers are not in order, once each")
        }

        let staffRules = ["keys.gated-before-live", "keys.live-frontier", "keys.venue-lock", "keys.ended", "events.advance"]
        guard staffRules.contains(where: isSelected) else { return }
        guard let staff, let session, let device else {
            let reason = staff == nil ? "needs a staff token (--staff-token) to drive the session's state"
                : "needs a device and a session: " + (missing["a device"] ?? missing["a session"] ?? "not set up")
            for id in staffRules { rule(id) { _ in throw Skip(reason) } }
            return
        }
        guard let original = try? staff.session(session), let count = original["slideCount"]?.intValue else {
            for id in staffRules { rule(id) { _ in throw Broken("the staff API did not show session \(session)") } }
            return
        }
        originalSession = original

        rule("keys.gated-before-live") { evidence in
            for state in ["draft", "scheduled", "rehearsal"] {
                try staff.set(session, ["state": .string(state), "venueNetworks": []])
                if state == "rehearsal" {
                    try staff.advance(session, to: count - 1)
                    evidence.add("rehearsal advance to the last slide \(count - 1)")
                }
                let (slides, _) = try releasedSlides(device, session)
                evidence.add("\(state): \(slides.count) keys released")
                try expect(slides.isEmpty, "\(state) released \(ReleasedKeys.describe(slides))")
            }
        }

        // Live: the frontier moves by one (when it can) while an event stream listens. A set-up step of its own,
        // so that each rule needing it runs alone too (--only).
        let stream = selectedStream(device, session)
        var live: (frontier: Int, advanced: (target: Int, sentAt: Double)?, notes: [String])?
        var liveFailure: (any Error)?
        if ["keys.live-frontier", "keys.venue-lock", "keys.ended", "events.advance"].contains(where: isSelected) {
            do {
                var notes: [String] = []
                try staff.set(session, ["state": "live", "venueNetworks": []])
                let before = try staff.session(session)["maxShown"]?.intValue
                let target = before.map { min($0 + 1, count - 2) } ?? 0
                var advanced: (target: Int, sentAt: Double)?
                if target > (before ?? -1) {
                    stream?.waitForSnapshot()
                    let sentAt = Date().timeIntervalSince1970
                    try staff.advance(session, to: target)
                    advanced = (target, sentAt)
                    notes.append("live, frontier \(before.map(String.init) ?? "none") → advance to \(target)")
                } else {
                    notes.append("live, frontier already \(before!) of \(count - 1): cannot leave a slide unreleased")
                }
                guard let shown = try staff.session(session)["maxShown"]?.intValue else { throw Broken("no frontier after the advance") }
                live = (shown, advanced, notes)
            } catch {
                liveFailure = error
            }
        }
        func needLive(_ evidence: Evidence) throws -> Int {
            guard let live else { throw liveFailure ?? Skip("the session could not be made live") }
            live.notes.forEach(evidence.add)
            return live.frontier
        }

        rule("keys.live-frontier") { evidence in
            let shown = try needLive(evidence)
            let (slides, json) = try releasedSlides(device, session)
            evidence.add("keys: \(ReleasedKeys.describe(slides)) with maxShown \(shown)")
            try expect(slides == Array(0...shown), "expected exactly slides 0–\(shown), got \(ReleasedKeys.describe(slides))")
            let deck = sessionManifest?.json["slides"]?.arrayValue ?? []
            for entry in json["released"]?.arrayValue ?? [] {
                guard let n = entry["n"]?.intValue, n < deck.count, let hash = deck[n]["assetHash"]?.stringValue,
                      let key = entry["keyB64"]?.stringValue.flatMap({ Data(base64Encoded: $0) }),
                      let nonce = entry["nonceB64"]?.stringValue.flatMap({ Data(base64Encoded: $0) })
                else { throw Broken("a released entry is not {n, keyB64, nonceB64} for a slide of the manifest") }
                let blob = try assets.get("/api/sync/asset/\(hash)")
                do { _ = try AES256GCM.open(blob.body, key: Array(key), nonce: Array(nonce)) } catch {
                    throw Broken("slide \(n)'s released key does not open its asset")
                }
            }
            evidence.add("each released key opens its slide's asset (AES-256-GCM)")
        }

        rule("events.advance") { evidence in
            let stream = try need(stream, "an event stream")
            _ = try needLive(evidence)
            let (target, sentAt) = try need(live?.advanced, "an advance (the frontier was at the last slide but one)")
            guard let receivedAt = stream.waitForAdvance(target, within: 3) else {
                throw Broken("no advance event with maxShown \(target) within 3 s of the staff advance (\(stream.summary))")
            }
            evidence.add("advance to \(target) on the event stream \(String(format: "%.0f", (receivedAt - sentAt) * 1000)) ms after the staff call was sent")
            try expect(receivedAt - sentAt < 1, "the advance took more than a second to arrive")
        }
        stream?.stop()

        rule("keys.venue-lock") { evidence in
            let shown = try needLive(evidence)
            try staff.set(session, ["state": "live", "venueNetworks": ["192.0.2.0/24"]])
            let (locked, _) = try releasedSlides(device, session)
            evidence.add("venue 192.0.2.0/24 (not the suite's address): \(locked.count) keys released")
            try expect(locked.isEmpty, "a request from outside the venue got \(ReleasedKeys.describe(locked))")
            try staff.set(session, ["venueNetworks": []])
            let (open, _) = try releasedSlides(device, session)
            evidence.add("venue lock lifted: \(ReleasedKeys.describe(open))")
            try expect(open == Array(0...shown), "after the lock was lifted: \(ReleasedKeys.describe(open)), expected 0–\(shown)")
        }

        rule("keys.ended") { evidence in
            let shown = try needLive(evidence)
            try staff.set(session, ["state": "ended", "allowDownload": false, "venueNetworks": []])
            let (frontierOnly, _) = try releasedSlides(device, session)
            evidence.add("ended without download: \(ReleasedKeys.describe(frontierOnly))")
            try expect(frontierOnly == Array(0...shown), "expected the frontier 0–\(shown)")
            try staff.set(session, ["allowDownload": true])
            let (all, _) = try releasedSlides(device, session)
            evidence.add("ended with download: \(ReleasedKeys.describe(all)) of \(count)")
            try expect(all == Array(0..<count), "expected the whole deck 0–\(count - 1)")
        }
    }

    private func selectedStream(_ device: ConformanceDevice, _ session: String) -> EventListener? {
        guard isSelected("events.advance") else { return nil }
        return EventListener(
            client: SyncClient(server: options.server, transport: transport, signer: RequestSigner(deviceId: device.id, key: device.deviceKey))
                .forStreaming,
            session: session)
    }

    /// Puts the session's state, download permission and venue networks back (the frontier only moves forward).
    func restore() {
        guard let staff, let session, let original = originalSession else { return }
        var fields: [String: JSONValue] = [:]
        if let state = original["state"] { fields["state"] = state }
        if let allow = original["allowDownload"] { fields["allowDownload"] = allow }
        if let venue = original["venueNetworks"] { fields["venueNetworks"] = venue }
        _ = try? staff.set(session, .object(fields))
    }
}

/// A session's event stream, listened to on a thread of its own.
final class EventListener: Sendable {
    private final class State: Sendable {
        let events = Mutex<[(event: ServerSentEvent, at: Double)]>([])
        let status = Mutex<String>("connecting")
    }

    private let state = State()
    private let cancellation = Cancellation()

    init(client: SyncClient, session: String) {
        let state = self.state, cancellation = self.cancellation
        Thread {
            let parser = Mutex(ServerSentEventParser())
            do {
                try client.signedExchange(
                    "GET", "/api/sync/events?session=\(session)", headers: [("Accept", "text/event-stream")], cancellation: cancellation
                ) { event in
                    switch event {
                    case let .head(code, _): state.status.withLock { $0 = "answered \(code)" }
                    case let .data(bytes):
                        let now = Date().timeIntervalSince1970
                        let parsed = parser.withLock { $0.feed(bytes) }
                        state.events.withLock { $0 += parsed.map { ($0, now) } }
                    }
                }
                state.status.withLock { $0 += ", then ended" }
            } catch {
                state.status.withLock { $0 += ", then \(error)" }
            }
        }.start()
    }

    var summary: String {
        let names = state.events.withLock { $0.map(\.event.event) }
        return "the stream \(state.status.withLock { $0 }); events: \(names.isEmpty ? "none" : names.joined(separator: ", "))"
    }

    /// Waits (up to 3 s) for the stream's first manifest event: the end of its snapshot.
    func waitForSnapshot() {
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline, !state.events.withLock({ $0.contains { $0.event.event == "manifest" } }) { Thread.sleep(forTimeInterval: 0.01) }
    }

    /// When an advance event with `maxShown` arrived, waiting up to `seconds`.
    func waitForAdvance(_ maxShown: Int, within seconds: Double) -> Double? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let found = state.events.withLock { list in
                list.first { $0.event.event == "advance" && (try? JSONValue.parse(Array($0.event.data.utf8)))?["maxShown"]?.intValue == maxShown }?.at
            }
            if let found { return found }
            if Date() > deadline { return nil }
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    func stop() { cancellation.cancel() }
}
