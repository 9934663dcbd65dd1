import Foundation
import PulseCore
import PulseServerStorage
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseConsole

/// The console's event streams are connections: a staff token must not hold the server's connection slots.
/// Each console session holds at most `maxStreamsPerSession` (8) and each staff token `maxStreamsPerToken`
/// (16), clickers and live views together; a newer stream ends the oldest with `ended`
/// `{"reason":"tooManyStreams"}` (the script stops that page's EventSource and says why) and its connection
/// closes.
@Suite struct StreamLimitTests {
    /// Opens a console stream (`path`) as the page's script does, and reads its first event.
    static func open(_ harness: ConsoleHarness, _ path: String, cookie: String, first marker: String = "event: ") throws -> RawHTTPConnection {
        let connection = try RawHTTPConnection(host: "127.0.0.1", port: Int(harness.port), timeout: 5)
        try connection.send(
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(harness.port)\r\nCookie: pulse_console=\(cookie)\r\nAccept: text/event-stream\r\n\r\n")
        let head = try connection.readHead()
        guard head.status == 200, head.header("content-type") == "text/event-stream" else {
            throw TestFailure("\(path) answered \(head.status)")
        }
        _ = try read(connection, until: marker)
        return connection
    }

    /// Reads the stream until `marker`; what was read.
    static func read(_ connection: RawHTTPConnection, until marker: String) throws -> String {
        var text = ""
        while !text.contains(marker) {
            guard let chunk = try connection.readChunk() else { throw TestFailure("the stream ended before \(marker): \(text)") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        return text
    }

    /// The stream was pushed out: its `ended` event says why, then the stream and the connection end.
    static func expectPushedOut(_ connection: RawHTTPConnection, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let text = try read(connection, until: "tooManyStreams")
        #expect(text.contains("event: ended\ndata: {\"reason\":\"tooManyStreams\"}\n\n"), "\(text)", sourceLocation: sourceLocation)
        #expect(try connection.readChunk() == nil, sourceLocation: sourceLocation)
        #expect(connection.closesWithinTimeout(), "the connection stays open", sourceLocation: sourceLocation)
    }

    @Test func aConsoleSessionHoldsEightStreamsAndANewerOneEndsTheOldest() throws {
        let harness = try ConsoleHarness()
        let token = try harness.server.administration.createStaffToken(role: .presenter, session: "keynote").text
        let cookie = try #require(try harness.signIn(token).cookie)
        let console = harness.server.sync.console
        var streams = try (0..<8).map { _ in try Self.open(harness, "/console/sessions/keynote/events", cookie: cookie, first: "event: clicker") }
        #expect(console.streamLimits.count(consoleSession: cookie) == 8)
        // A ninth (a forgotten tab, or a client opening streams to hold connections): the oldest goes.
        streams.append(try Self.open(harness, "/console/sessions/keynote/events", cookie: cookie, first: "event: clicker"))
        try Self.expectPushedOut(streams.removeFirst())
        #expect(eventually(within: 5) { console.streamLimits.count(consoleSession: cookie) == 8 && console.openStreams == 8 })
        // A client that ignores `ended` and keeps opening only pushes out its own oldest streams.
        for _ in 0..<4 {
            streams.append(try Self.open(harness, "/console/sessions/keynote/events", cookie: cookie, first: "event: clicker"))
            try Self.expectPushedOut(streams.removeFirst())
        }
        #expect(eventually(within: 5) { console.openStreams == 8 })
        // The newest eight keep hearing the clicker.
        try harness.server.set("keynote", SessionUpdate(state: .live))
        try harness.server.advance("keynote", to: 1)
        for stream in streams { #expect(try Self.read(stream, until: "Slide 2 of").contains("event: clicker")) }
    }

    /// Per staff token across its console sessions, clicker and live view streams together.
    @Test func aStaffTokenHoldsSixteenStreamsAcrossItsConsoleSessions() throws {
        let harness = try ConsoleHarness()
        let token = try harness.server.staffToken()
        let cookies = try (0..<3).map { _ in try #require(try harness.signIn(token).cookie) }
        let console = harness.server.sync.console
        var first: [RawHTTPConnection] = []
        for index in 0..<8 {
            let path = index % 2 == 0 ? "/console/sessions/keynote/events" : "/console/sessions/keynote/live/events"
            first.append(try Self.open(harness, path, cookie: cookies[0]))
        }
        let second = try (0..<8).map { _ in try Self.open(harness, "/console/sessions/keynote/live/events", cookie: cookies[1]) }
        #expect(console.streamLimits.count(consoleSession: cookies[0]) == 8 && console.streamLimits.count(consoleSession: cookies[1]) == 8)
        // A third browser signed in with the same token: the token's oldest stream (the first session's) goes.
        let third = try Self.open(harness, "/console/sessions/keynote/events", cookie: cookies[2])
        try Self.expectPushedOut(first[0])
        #expect(console.streamLimits.count(consoleSession: cookies[0]) == 7)
        #expect(console.streamLimits.count(consoleSession: cookies[2]) == 1)
        #expect(eventually(within: 5) { console.openStreams == 16 })
        // Another staff token is not held back by it.
        let other = try #require(try harness.signIn(try harness.server.staffToken()).cookie)
        _ = try Self.open(harness, "/console/sessions/keynote/events", cookie: other)
        #expect(eventually(within: 5) { console.openStreams == 17 })
        withExtendedLifetime((first, second, third)) {}
    }

    /// The probe's finding: one presenter's console session held 20 of a server's 20 connections with clicker
    /// streams. Now it holds eight; the others' connections close and the server keeps answering.
    @Test func onePresenterCannotHoldTheServersConnections() throws {
        let harness = try ConsoleHarness(serverConfigure: { $0.maxConnections = 20 })
        let token = try harness.server.administration.createStaffToken(role: .presenter, session: "keynote").text
        let cookie = try #require(try harness.signIn(token).cookie)
        var held: [RawHTTPConnection] = []
        for index in 0..<20 {
            do { held.append(try Self.open(harness, "/console/sessions/keynote/events", cookie: cookie, first: "event: clicker")) } catch {
                Issue.record("stream \(index): \(error)")
            }
        }
        #expect(held.count == 20)
        #expect(eventually(within: 5) { harness.server.sync.console.openStreams == 8 })
        // Someone else still gets in: a phone's request, another person's sign-in page.
        for _ in 0..<5 { #expect(try harness.get("/console/sign-in").status == 200) }
        withExtendedLifetime(held) {}
    }
}
