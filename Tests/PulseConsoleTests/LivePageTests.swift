import Foundation
import PulseCore
import PulseServerStorage
import PulseSystem
import SyncTestSupport
import Testing

/// The live view: "Devices in the room" renders device strings as text, and a diag sample reaches an open
/// page's stream as a `devices` event of that row only, within a second.
@Suite struct LivePageTests {
    /// Opens the live view's event stream as the page's script does.
    static func openStream(_ harness: PagesHarness, session: String, since: Int64) throws -> RawHTTPConnection {
        let connection = try RawHTTPConnection(host: "127.0.0.1", port: Int(harness.server.port), timeout: 5)
        try connection.send(
            "GET /console/sessions/\(session)/live/events?since=\(since) HTTP/1.1\r\nHost: 127.0.0.1:\(harness.server.port)\r\n"
                + "Cookie: pulse_console=\(harness.cookie)\r\nAccept: text/event-stream\r\n\r\n")
        let head = try connection.readHead()
        guard head.status == 200, head.header("content-type") == "text/event-stream" else {
            throw TestFailure("live events answered \(head.status) \(head.header("content-type") ?? "")")
        }
        return connection
    }

    /// Reads the stream until a `devices` event holds `marker`; the events read.
    static func readEvents(_ connection: RawHTTPConnection, until marker: String, within seconds: Double) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        var text = ""
        while Date() < deadline {
            guard let chunk = try connection.readChunk() else { break }
            text += String(decoding: chunk, as: UTF8.self)
            if text.contains(marker) { return text }
        }
        throw TestFailure("no event with \(marker) within \(seconds) s; read: \(text)")
    }

    /// The header's navigation marks the section a page belongs to, once: a session's live view is under
    /// "Live view", its clicker and report under "Sessions", a device's revoke page under "Devices".
    @Test func theNavigationMarksOneSectionPerPage() throws {
        let harness = try PagesHarness()
        func current(_ path: String) throws -> [String] {
            try harness.get(path).text.components(separatedBy: #"aria-current="page">"#).dropFirst().map { String($0.prefix { $0 != "<" }) }
        }
        #expect(try current("/console/sessions/keynote/live") == ["Live view"])
        #expect(try current("/console/live") == ["Live view"])
        #expect(try current("/console/sessions/keynote") == ["Sessions"])
        #expect(try current("/console/sessions/keynote/report") == ["Sessions"])
        #expect(try current("/console/devices") == ["Devices"])
    }

    @Test func theTableShowsHostileStringsAsTextAndTheStreamCount() throws {
        let harness = try PagesHarness()
        let phone = try harness.enroll(.session("keynote"), name: PagesHarness.hostileName)
        #expect(try harness.diag(phone, session: "keynote", build: PagesHarness.hostileBuild, rtt: 42) == 204)
        let page = try harness.get("/console/sessions/keynote/live")
        #expect(page.status == 200)
        #expect(page.text.contains("<caption>Devices in the room</caption>"))
        #expect(page.text.contains(#"id="live-streams">0<"#))
        #expect(page.text.contains(#"aria-live="polite""#))
        #expect(page.text.contains("<bdi>&lt;img src=x onerror=alert(1)&gt;</bdi>"))
        #expect(page.text.contains("<bdi>&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;</bdi>"))
        #expect(!page.text.contains(PagesHarness.hostileName) && !page.text.contains("<script>alert"))
        #expect(page.text.contains("42 ms") && page.text.contains("online") && page.text.contains("wifi"))
        #expect(try harness.get("/console/live").text.contains(#"href="/console/sessions/keynote/live""#))
        #expect(try harness.get("/console/sessions/nope/live").status == 404)
    }

    @Test func aDiagSampleReachesTheOpenPageWithinASecondAsItsRowOnly() throws {
        let harness = try PagesHarness()
        let quiet = try harness.enroll(.session("keynote"), name: "Quiet phone")
        #expect(try harness.diag(quiet, session: "keynote", build: "1.0", rtt: 10) == 204)
        let phone = try harness.enroll(.session("keynote"), name: PagesHarness.hostileName)
        let now = Int64(Date().timeIntervalSince1970)
        let stream = try Self.openStream(harness, session: "keynote", since: now + 1)
        // The first event: no rows newer than the page, the stream count.
        let first = try Self.readEvents(stream, until: "\"streams\":", within: 2)
        #expect(first.contains("event: devices") && first.contains("\"rows\":[]"), "\(first)")

        let sent = Date()
        #expect(try harness.diag(phone, session: "keynote", build: PagesHarness.hostileBuild, rtt: 77, online: false) == 204)
        let delta = try Self.readEvents(stream, until: phone.id, within: 1)
        let elapsed = Date().timeIntervalSince(sent)
        #expect(elapsed < 1, "the delta came after \(elapsed) s")
        let line = try #require(delta.split(separator: "\n").last { $0.hasPrefix("data: ") && $0.contains(phone.id) })
        let event = try JSONValue.parse(Array(line.dropFirst(6).utf8))
        let rows = try #require(event["rows"]?.arrayValue)
        #expect(rows.count == 1, "only the changed row: \(rows)")
        let cells = rows.first?["cells"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(cells.prefix(6) == [PagesHarness.hostileName, "ios", PagesHarness.hostileBuild, "offline", "77 ms", "wifi"])
        #expect(!delta.contains("Quiet phone"))
    }
}
