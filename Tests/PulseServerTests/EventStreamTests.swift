import Foundation
import PulseCore
import PulseCrypto
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseServer
@testable import PulseServerStorage

/// One open `GET /api/sync/events` stream, read event by event.
final class EventReader {
    struct Event: Equatable, CustomStringConvertible {
        var id: String?
        var name: String
        var data: JSONValue?
        var description: String { "\(id ?? "-") \(name) \(data.map { String(decoding: $0.canonicalBytes, as: UTF8.self) } ?? "")" }
    }

    let client: RawHTTPConnection
    let head: RawHTTPResponse
    private var text = ""
    private(set) var retry: String?
    private(set) var ended = false

    convenience init(_ harness: SyncHarness, device: TestDevice, session: String, lastEventId: String? = nil, timeout: Double = 5) throws {
        try self.init(try harness.client(timeout: timeout), device: device, session: session, at: harness.clock.seconds, lastEventId: lastEventId)
    }

    /// A stream over `client` (a server, or a proxy in front of several), signed at `timestamp`.
    init(_ client: RawHTTPConnection, device: TestDevice, session: String, at timestamp: Int64, lastEventId: String? = nil) throws {
        self.client = client
        let target = "/api/sync/events?session=\(session)"
        var headers = [("X-Pulse-Device", try device.header("GET", target, at: timestamp)), ("Accept", "text/event-stream")]
        if let lastEventId { headers.append(("Last-Event-ID", lastEventId)) }
        var request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try client.send(request + "\r\n")
        head = try client.readHead()
    }

    /// The next `count` events (comments and `retry:` lines skipped), or fewer if the stream ends.
    func next(_ count: Int = 1) throws -> [Event] {
        var events: [Event] = []
        while events.count < count {
            if let range = text.range(of: "\n\n") {
                let block = String(text[..<range.lowerBound])
                text = String(text[range.upperBound...])
                var event = Event(id: nil, name: "message", data: nil)
                var hasData = false
                for line in block.split(separator: "\n") {
                    if line.hasPrefix("id: ") { event.id = String(line.dropFirst(4)) }
                    if line.hasPrefix("event: ") { event.name = String(line.dropFirst(7)) }
                    if line.hasPrefix("data: ") { event.data = try JSONValue.parse(Data(line.dropFirst(6).utf8)); hasData = true }
                    if line.hasPrefix("retry: ") { retry = String(line.dropFirst(7)) }
                }
                if hasData { events.append(event) }
                continue
            }
            guard let chunk = try client.readChunk() else { ended = true; return events }
            text += String(decoding: chunk, as: UTF8.self)
            // Heartbeat comment lines (":") on their own are not events.
            while text.hasPrefix(":\n") { text.removeFirst(2) }
        }
        return events
    }
}

/// Server-Sent Events: the snapshot, advances from the staff API and from another instance, resuming,
/// gated releases, revoked devices.
@Suite struct EventStreamTests {
    @Test func aStreamStartsWithTheStateAndHearsEveryAdvance() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk"], state: .live)
        _ = try harness.storage.advance(sessionId: "talk", to: 2, at: harness.clock.seconds)
        let device = try harness.device(for: .session("talk"))
        let version = try #require(try harness.storage.session(id: "talk")).packageVersion
        let sequence = try #require(try harness.storage.session(id: "talk")).changeSequence
        let stream = try EventReader(harness, device: device, session: "talk")
        #expect(stream.head.status == 200)
        #expect(stream.head.header("content-type") == "text/event-stream" && stream.head.header("cache-control") == "no-store")
        let snapshot = try stream.next(3)
        #expect(stream.retry == "3000")
        #expect(snapshot == [
            .init(id: "\(sequence)", name: "state", data: ["state": "live", "allowDownload": false, "venueLocked": false]),
            .init(id: "\(sequence)", name: "advance", data: ["maxShown": 2, "deckVersion": 1]),
            .init(id: "\(sequence)", name: "manifest", data: ["packageVersion": .string(version), "deckVersion": 1]),
        ])

        // The presenter's clicker (staff API): the event arrives without polling delay.
        let staff = try harness.staffToken()
        let started = Date()
        let answer = try harness.client().request("POST", "/api/staff/sessions/talk/advance", [("Authorization", "Bearer \(staff)")], body: Array(#"{"maxShown":3}"#.utf8))
        #expect(answer.status == 200)
        #expect(try stream.next() == [.init(id: "\(sequence + 1)", name: "advance", data: ["maxShown": 3, "deckVersion": 1])])
        #expect(Date().timeIntervalSince(started) < 1)

        // Another instance on the same database (another server, the admin CLI): from storage, not from a call.
        let peer = try SQLiteStorage(path: harness.data.databasePath)
        _ = try peer.advance(sessionId: "talk", to: 5, at: harness.clock.seconds)
        _ = try peer.updateSession(id: "talk", SessionUpdate(state: .ended, allowDownload: true), at: harness.clock.seconds)
        #expect(try stream.next(3) == [
            .init(id: "\(sequence + 2)", name: "advance", data: ["maxShown": 5, "deckVersion": 1]),
            .init(id: "\(sequence + 3)", name: "state", data: ["state": "ended", "allowDownload": true, "venueLocked": false]),
            .init(id: "\(sequence + 4)", name: "state", data: ["state": "ended", "allowDownload": true, "venueLocked": false]),
        ])
        // A new deck: a manifest event with the new version.
        let newDeck = TestContent.session("talk", deckVersion: 2, slides: 12, seed: "v2")
        _ = try peer.importContent(TestContent.plan([newDeck]), options: ImportOptions(), at: harness.clock.seconds)
        #expect(try stream.next() == [.init(id: "\(sequence + 5)", name: "manifest", data: ["packageVersion": .string(newDeck.packageVersion), "deckVersion": 2])])
        #expect(harness.sync.openStreams == 1)
    }

    @Test func lastEventIdResumesWithWhatChanged() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk"], state: .live)
        let device = try harness.device(for: .session("talk"))
        let start = try #require(try harness.storage.session(id: "talk")).changeSequence
        _ = try harness.storage.advance(sessionId: "talk", to: 1, at: harness.clock.seconds)
        _ = try harness.storage.advance(sessionId: "talk", to: 4, at: harness.clock.seconds)
        let version = try #require(try harness.storage.session(id: "talk")).packageVersion
        let stream = try EventReader(harness, device: device, session: "talk", lastEventId: "\(start)")
        #expect(try stream.next(3) == [
            .init(id: "\(start + 1)", name: "advance", data: ["maxShown": 1, "deckVersion": 1]),
            .init(id: "\(start + 2)", name: "advance", data: ["maxShown": 4, "deckVersion": 1]),
            .init(id: "\(start + 2)", name: "manifest", data: ["packageVersion": .string(version), "deckVersion": 1]),
        ])
        // Up to date: only the manifest version. From the future or garbage: the snapshot.
        #expect(try EventReader(harness, device: device, session: "talk", lastEventId: "\(start + 2)").next().map(\.name) == ["manifest"])
        #expect(try EventReader(harness, device: device, session: "talk", lastEventId: "999").next(3).map(\.name) == ["state", "advance", "manifest"])
        #expect(try EventReader(harness, device: device, session: "talk", lastEventId: "x").next(3).map(\.name) == ["state", "advance", "manifest"])
    }

    /// `Last-Event-ID` is read by `BoundedDecimal`: 1 to 18 ASCII digits and nothing else, a value from 0 to the
    /// session's sequence (and at most 256 behind it). Leading zeros spell the same number (the id is never
    /// signed or compared as text); a sign, 19 or 20 digits, an exponent, a space or a value beyond the
    /// sequence are no resume point: the stream starts with the snapshot, never a 4xx, never a trap.
    @Test func lastEventIdTakesDigitsWithinTheSequenceOnly() throws {
        let harness = try SyncHarness(configure: { $0.deviceLimit = RateLimit(rate: 1000, burst: 1000) })
        try harness.seed(["talk"], state: .live)
        let device = try harness.device(for: .session("talk"))
        let start = try #require(try harness.storage.session(id: "talk")).changeSequence
        _ = try harness.storage.advance(sessionId: "talk", to: 1, at: harness.clock.seconds)
        _ = try harness.storage.advance(sessionId: "talk", to: 4, at: harness.clock.seconds)
        let sequence = start + 2
        let resumed = ["advance", "advance", "manifest"], snapshot = ["state", "advance", "manifest"]
        func opening(_ value: String, events: Int = 3) throws -> [String] {
            let stream = try EventReader(harness, device: device, session: "talk", lastEventId: value)
            #expect(stream.head.status == 200, "\(value): \(stream.head.status)")
            return try stream.next(events).map(\.name)
        }
        for value in ["\(start)", "0\(start)", "000\(start)", String(repeating: "0", count: 18 - "\(start)".count) + "\(start)"] {
            #expect(try opening(value) == resumed, "\(value)")
        }
        #expect(try opening("\(sequence)", events: 1) == ["manifest"])  // up to date
        for value in [
            "+\(start)", "-\(start)", "-0", "+0", "-1", "\(sequence + 1)", "\(sequence + 1000)", String(repeating: "0", count: 19),
            String(repeating: "0", count: 19) + "\(start)", "99999999999999999999", "18446744073709551616", "9223372036854775807",
            "9223372036854775808", "999999999999999999", "1e2", "0x1", "\(start).0", "\(start) 1", "", "\u{FF11}",
        ] {
            #expect(try opening(value) == snapshot, "\(value)")
        }
        #expect(try harness.client().request("GET", "/healthz").status == 200)
    }

    @Test func gatedReleasesReachStreamsAsManifestEvents() throws {
        let (harness, version) = try ManifestRouteTests.harness()
        _ = try harness.storage.updateSession(id: "talk", SessionUpdate(state: .live), at: harness.clock.seconds)
        let device = try harness.device(for: .session("talk"))
        let stream = try EventReader(harness, device: device, session: "talk")
        #expect(try stream.next(2).last?.data?["packageVersion"]?.stringValue == version)
        // The frontier reaches the gated resource's slide: an advance, then the new version.
        _ = try harness.storage.advance(sessionId: "talk", to: 3, at: harness.clock.seconds)
        let events = try stream.next(2)
        #expect(events.map(\.name) == ["advance", "manifest"])
        let released = try #require(events.last?.data?["packageVersion"]?.stringValue)
        #expect(released != version)
        // The clock reaches the other's releaseAt: nothing in the change log, still a manifest event.
        harness.clock.advance(by: 3600)
        let clockEvent = try stream.next()
        #expect(clockEvent.map(\.name) == ["manifest"] && clockEvent.first?.data?["packageVersion"]?.stringValue != released)
    }

    @Test func aRevokedDevicesStreamsAreClosedAndStopEndsTheRest() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk"], state: .live)
        let device = try harness.device(for: .session("talk"))
        let other = try harness.device(for: .session("talk"))
        let mine = try EventReader(harness, device: device, session: "talk")
        let theirs = try EventReader(harness, device: other, session: "talk")
        _ = try mine.next(2)
        _ = try theirs.next(2)
        #expect(eventually(within: 2) { harness.sync.openStreams == 2 })
        try harness.administration.revokeDevice(id: device.id)
        #expect(try mine.next(5).isEmpty && mine.ended)  // the stream ends (the last chunk)
        #expect(eventually(within: 2) { harness.sync.openStreams == 1 })
        // The server stops: the remaining stream ends cleanly.
        harness.server.shutdown(drainSeconds: 2)
        #expect(try theirs.next(5).isEmpty && theirs.ended)
        #expect(eventually(within: 2) { harness.sync.openStreams == 0 })
    }

    @Test func aDeviceHoldsAFewStreamsAtMost() throws {
        let harness = try SyncHarness(configure: { $0.streamsPerDevice = 2 })
        try harness.seed(["talk"], state: .live)
        let device = try harness.device(for: .session("talk"))
        let streams = try (0..<3).map { _ in try EventReader(harness, device: device, session: "talk") }
        for stream in streams { _ = try stream.next(2) }
        #expect(eventually(within: 2) { harness.sync.openStreams == 2 })
        #expect(try streams[0].next(5).isEmpty && streams[0].ended)
    }

    /// A venue's Wi-Fi drops: phones reconnect with Last-Event-ID while the server still holds their old
    /// streams (no reset reached it). Each resumed stream replaces the device's old one at once, instead of
    /// both being held until the old one's heartbeat fails; a stream without Last-Event-ID adds one.
    @Test func aResumedStreamReplacesTheDevicesOldOne() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk"], state: .live)
        let device = try harness.device(for: .session("talk"))
        let first = try EventReader(harness, device: device, session: "talk")
        let events = try first.next(2)
        let last = try #require(events.last?.id)
        let second = try EventReader(harness, device: device, session: "talk")
        _ = try second.next(2)
        #expect(eventually(within: 2) { harness.sync.openStreams == 2 }, "a second stream of its own is allowed")
        let resumed = try EventReader(harness, device: device, session: "talk", lastEventId: last)
        #expect(try resumed.next().map(\.name) == ["manifest"])
        #expect(try first.next(5).isEmpty && first.ended, "the oldest stream is closed by the resumed one")
        #expect(eventually(within: 2) { harness.sync.openStreams == 2 })
        _ = try harness.storage.advance(sessionId: "talk", to: 2, at: harness.clock.seconds)
        #expect(try resumed.next().map(\.name) == ["advance"])
        #expect(try second.next().map(\.name) == ["advance"])
    }
}
