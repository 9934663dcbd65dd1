import Foundation
import PulseSystem
import PulseSystemTesting
import Testing
@testable import PulseHTTPServer

/// Issue 23: a steady keep-alive load must see no connection closed under it. The closes came from the
/// tracker's sweeper: it read the clock, then walked the connections while the server threads went on answering,
/// so a connection answered in between had a phase younger than "now" and an age of `now &- since`, about
/// 2^64 ns: past every deadline, it was shut down while its client was sending the next request.
@Suite(.serialized) struct KeepAliveTests {
    static let second: UInt64 = 1_000_000_000

    /// The race itself, without threads: a phase stamped just after the sweep's clock is not overdue.
    @Test func aConnectionAnsweredAfterTheSweepReadTheClockIsNotOverdue() throws {
        let tracker = ConnectionTracker(limits: .init(
            maxConnections: 10, headerTimeout: 10 * Self.second, idleTimeout: 15 * Self.second, heartbeat: 0))
        let sockets = try SocketPair()
        let now = 1_000 * Self.second
        let context = RequestContext()
        _ = tracker.opened(context, fd: sockets.server, now: now - Self.second)
        // A server thread finished a response a microsecond after the sweeper read the clock.
        context.phase.store(ConnectionPhase.keepAlive(since: now + 1_000), ordering: .relaxed)
        tracker.sweep(now: now)
        #expect(!context.closing)
        #expect(tracker.closedByDeadline.load(ordering: .relaxed) == 0)
        // The same for a fresh connection opened just after.
        context.phase.store(ConnectionPhase.fresh(since: now + 1_000), ordering: .relaxed)
        tracker.sweep(now: now)
        #expect(!context.closing)
        // Still closed once really past its deadline (idle 15 s + 10 s for the next request).
        context.phase.store(ConnectionPhase.keepAlive(since: now), ordering: .relaxed)
        tracker.sweep(now: now + 26 * Self.second)
        #expect(context.closing)
        #expect(tracker.closedByDeadline.load(ordering: .relaxed) == 1)
    }

    /// A refused connection (here at `maxConnections` 0) whose request has not come within `refusalTimeout` is
    /// written its 503 and its sending side shut, not closed: it stays until the header deadline (or the client
    /// closes it). One whose request line has come is left to answer its request, with the header deadline.
    @Test func aRefusedConnectionIsAnsweredUnaskedThenClosedAtTheHeaderDeadline() throws {
        let tracker = ConnectionTracker(limits: .init(maxConnections: 0, headerTimeout: 10 * Self.second, idleTimeout: 15 * Self.second, heartbeat: 0))
        let now = 1_000 * Self.second
        let silent = try SocketPair(), started = try SocketPair()
        let quiet = RequestContext(), asking = RequestContext()
        #expect(tracker.opened(quiet, fd: silent.server, now: now) == .refusedOnRequest)
        #expect(tracker.opened(asking, fd: started.server, now: now) == .refusedOnRequest)
        tracker.refusedRequestStarted(asking)
        tracker.sweep(now: now + Self.second + 1)
        #expect(quiet.refusalAnswered && !quiet.closing)
        #expect(!asking.refusalAnswered && !asking.closing, "its request is on its way: the request answers it")
        var buffer = [UInt8](repeating: 0, count: 512)
        let got = recv(silent.client, &buffer, buffer.count, 0)
        #expect(got > 0 && String(decoding: buffer.prefix(max(got, 0)), as: UTF8.self).hasSuffix("\r\n\r\ntoo many connections\n"))
        #expect(recv(silent.client, &buffer, buffer.count, 0) == 0, "then the end of the stream")
        #expect(recv(started.client, &buffer, buffer.count, Int32(MSG_DONTWAIT)) < 0, "nothing written to the one asking")
        tracker.sweep(now: now + 10 * Self.second + 1)
        #expect(quiet.closing && asking.closing, "the header deadline closes both")
        #expect(tracker.refusalsAnsweredUnasked.load(ordering: .relaxed) == 1 && tracker.closedByDeadline.load(ordering: .relaxed) == 0)
    }

    /// The same race for event streams' heartbeats: the sweep reads the clock, then a server thread writes an event
    /// to a stream before the sweep reaches it. Its last write is after "now": nothing is due (`now &- lastWrite`
    /// wrapped to about 2^64 and wrote a heartbeat at once); a stream silent for the interval still gets one.
    @Test func aStreamWrittenAfterTheSweepReadTheClockGetsNoHeartbeat() throws {
        let stream = HTTPEventStream(heartbeat: Array(":\n".utf8))
        let now = monotonicNanoseconds()
        #expect(stream.send(Array("data: 1\n\n".utf8)))
        let pending = stream.pendingCount
        stream.heartbeatIfSilent(now: now, interval: Self.second)
        #expect(stream.pendingCount == pending, "no heartbeat for a stream written after the sweep's clock")
        stream.heartbeatIfSilent(now: monotonicNanoseconds() + 2 * Self.second, interval: Self.second)
        #expect(stream.pendingCount == pending + 2, "a heartbeat after a silence of the interval")
    }

    /// 64 keep-alive clients for 3 s (Scripts/lib/keepalive-clients) with the sweeper checking every millisecond
    /// instead of every 250 ms (the race's odds per second scale with it): every request is answered, none cut.
    @Test func steadyKeepAliveLoadLosesNoConnection() throws {
        let server = try TestServer({
            $0.maxConnectionsPerIP = 0
            $0.sweepInterval = 0.001
        }) { _ in text(200, "ok") }
        let result = try KeepAliveLoad(port: server.port, connections: 64, seconds: 3).run()
        let cut = server.server.connectionsCut
        let unanswered = server.exchanges(count: 0).filter { !$0.completed }.count
        print("""
            keep-alive load: \(result.answered) answered, \(result.drops.count) without an answer; server: \(cut.byDeadline) \
            connections cut at a deadline, \(unanswered) requests it saw end unanswered
            """)
        for drop in result.drops.prefix(10) { print("  \(drop)") }
        #expect(result.answered > 1_000)
        #expect(result.statuses.keys.sorted() == ["200"], "\(result.statuses)")
        #expect(result.connectErrors == 0)
        #expect(result.drops.isEmpty, "\(result.drops.count) requests without an answer, first: \(result.drops.prefix(3))")
        #expect(cut.byDeadline == 0 && cut.toMakeRoom == 0 && cut.refused == 0)
    }
}

/// A connected pair of local sockets, closed on deinit: a descriptor the tracker may shut down.
final class SocketPair {
    let server: Int32
    let client: Int32

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else {
            throw RawHTTPConnection.Failure("socketpair: \(String(cString: strerror(errno)))")
        }
        server = fds[0]
        client = fds[1]
    }

    deinit {
        close(server)
        close(client)
    }
}
