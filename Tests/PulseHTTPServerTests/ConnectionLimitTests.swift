import Foundation
import PulseHTTPServer
import PulseSystem
import PulseSystemTesting
import PulseTestSupport
import Testing

/// Issue 23: a connection over `maxConnectionsPerIP` or `maxConnections` gets an answer a client can act on —
/// its request answered 503 with `Retry-After` and `Connection: close` — instead of being dropped unanswered
/// (libmicrohttpd's own per-address limit closes it right after accepting it).
@Suite(.serialized) struct ConnectionLimitTests {
    static func expectRefusal(_ response: RawHTTPResponse, _ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 503, sourceLocation: sourceLocation)
        #expect(response.header("Retry-After") == "1", sourceLocation: sourceLocation)
        #expect(response.header("Connection") == "close", sourceLocation: sourceLocation)
        #expect(response.text == text, sourceLocation: sourceLocation)
    }

    @Test func overThePerAddressLimitTheRequestIsAnswered503() throws {
        let server = try TestServer({ $0.maxConnectionsPerIP = 3 }) { _ in text(200, "ok") }
        let held = try (0..<3).map { _ in try server.client() }
        for client in held { #expect(try client.request("GET", "/").status == 200) }

        let refused = try server.client(timeout: 3)
        Self.expectRefusal(try refused.request("GET", "/"), "too many connections from this address\n")
        #expect(refused.closesWithinTimeout())
        // Another address is not affected, and a slot freed is a slot again.
        #expect(try server.client(source: "127.0.0.2").request("GET", "/").status == 200)
        held[0].close()
        #expect(eventually(within: 2) { server.server.openConnections == 2 })
        #expect(try server.client().request("GET", "/").status == 200)
        #expect(server.server.connectionsCut.refused == 1 && server.server.connectionsCut.refusedForAddress == 1)
        #expect(server.exchanges(count: 6).contains { $0.status == 503 && $0.note == "address-limit" })
    }

    @Test func overTheConnectionLimitTheRequestIsAnswered503() throws {
        let server = try TestServer({ $0.maxConnections = 3; $0.maxConnectionsPerIP = 0 }) { _ in text(200, "ok") }
        let held = try (0..<3).map { _ in try server.client() }
        for client in held { #expect(try client.request("GET", "/").status == 200) }
        // All three waited less than a second: none is closed for the newcomer.
        let refused = try server.client(timeout: 3)
        Self.expectRefusal(try refused.request("GET", "/"), "too many connections\n")
        #expect(refused.closesWithinTimeout())
        #expect(held.allSatisfy { !$0.isClosedNow() })
        #expect(server.server.connectionsCut.refused == 1 && server.server.connectionsCut.refusedForAddress == 0)
        #expect(server.exchanges(count: 4).contains { $0.status == 503 && $0.note == "connection-limit" })
    }

    /// A refused connection that sends no request within a second (a client slowed down, or a server too busy to
    /// read it yet) is written its 503 unasked, then the end of the stream: an answer it can act on, where it used to
    /// be closed without a byte (wrk's read errors over the per-address limit on a loaded machine). Its request,
    /// sent after that, is read and nothing more is written; once the client closes, the slot is free again.
    @Test func aRefusedConnectionThatSendsNothingWithinASecondIsAnsweredUnasked() throws {
        let server = try TestServer({ $0.maxConnectionsPerIP = 1 }) { _ in text(200, "ok") }
        let held = try server.client()
        #expect(try held.request("GET", "/").status == 200)
        let silent = try server.client(timeout: 3)
        let started = Date()
        let answer = String(decoding: try silent.readUntilQuiet(seconds: 2.5), as: UTF8.self)
        #expect(Date().timeIntervalSince(started) < 2.5, "the end of the stream came with the answer")
        #expect(answer.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n") && answer.contains("\r\nRetry-After: 1\r\n")
            && answer.contains("\r\nConnection: close\r\n") && answer.hasSuffix("\r\n\r\ntoo many connections from this address\n"), "\(answer)")
        #expect(silent.isClosedNow())
        #expect(eventually(within: 2) { server.server.connectionsCut.refusedAnsweredUnasked == 1 }, "counted once its close is done")
        // Its request, late: read, and answered no more (the 503 libmicrohttpd tries to write fails on the shut side).
        try silent.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try silent.readUntilQuiet(seconds: 1).isEmpty)
        silent.close()
        #expect(eventually(within: 2) { (try? server.client(timeout: 2).request("GET", "/").status) == 503 })
        #expect(try held.request("GET", "/").status == 200)
    }

    /// When as many refused connections wait for their request as half of libmicrohttpd's headroom (64 with two
    /// threads), the next is refused at once: the 503 written before its request, then the connection closed. Its
    /// body names the limit that refused it, as the waiting ones' do (it said "too many connections" for both).
    @Test(arguments: ["address", "connections"])
    func tooManyWaitingRefusalsAreAnsweredAtOnce(_ limit: String) throws {
        let server = try TestServer({
            if limit == "address" { $0.maxConnectionsPerIP = 1 } else { $0.maxConnections = 1; $0.maxConnectionsPerIP = 0 }
            $0.threads = 2
        }) { _ in text(200, "ok") }
        let said = limit == "address" ? "too many connections from this address\n" : "too many connections\n"
        let held = try server.client()
        #expect(try held.request("GET", "/").status == 200)
        let waiting = try (0..<64).map { _ in try server.client(timeout: 3) }
        #expect(eventually(within: 1) { server.server.connectionsCut.refused == 64 })
        let atOnce = try server.client(timeout: 3)
        Self.expectRefusal(try atOnce.readResponse(), said)
        // The waiting ones still get their 503 when they ask (within their second).
        Self.expectRefusal(try waiting[0].request("GET", "/"), said)
        #expect(server.server.connectionsCut.refused == 65)
    }

    /// 100 keep-alive clients from one address with a limit of 64: 64 are served throughout, the rest get 503
    /// and reconnect, and not one request goes unanswered.
    @Test func aLoadOverTheLimitGetsAnswersNotDrops() throws {
        let server = try TestServer({ $0.maxConnectionsPerIP = 64 }) { _ in text(200, "ok") }
        let result = try KeepAliveLoad(port: server.port, connections: 100, seconds: 2).run()
        print("over the per-address limit: \(result.statuses), \(result.drops.count) without an answer, \(result.connectErrors) connect errors")
        #expect(result.drops.isEmpty, "\(result.drops.count) requests without an answer, first: \(result.drops.prefix(3))")
        #expect(result.connectErrors == 0)
        #expect(Set(result.statuses.keys) == ["200", "503"], "\(result.statuses)")
        #expect((result.statuses["200"] ?? 0) > 1_000)
    }
}
