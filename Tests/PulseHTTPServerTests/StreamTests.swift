import Foundation
import PulseHTTPServer
import PulseSystem
import PulseSystemTesting
import PulseTestSupport
import Synchronization
import Testing

/// The application side of an event-stream route: every open stream, and how each one ended.
final class FanOut: @unchecked Sendable {
    private let lock = NSLock()
    private var open: [ObjectIdentifier: HTTPEventStream] = [:]
    private var endings: [HTTPEventStream.End] = []

    /// A new stream registered here; it leaves when it ends.
    func stream(heartbeat: [UInt8] = Array(":\n".utf8)) -> HTTPEventStream {
        let stream = HTTPEventStream(heartbeat: heartbeat) { [weak self] stream, end in
            guard let self else { return }
            lock.withLock {
                open.removeValue(forKey: ObjectIdentifier(stream))
                endings.append(end)
            }
        }
        lock.withLock { open[ObjectIdentifier(stream)] = stream }
        return stream
    }

    func broadcast(_ text: String) {
        let bytes = Array(text.utf8)
        for stream in lock.withLock({ Array(open.values) }) { stream.send(bytes) }
    }

    var openCount: Int { lock.withLock { open.count } }
    var ended: [HTTPEventStream.End] { lock.withLock { endings } }
    var streams: [HTTPEventStream] { lock.withLock { Array(open.values) } }

    static func response(_ stream: HTTPEventStream) -> HTTPResponse {
        HTTPResponse(
            status: 200,
            headers: [HTTPHeader("Content-Type", "text/event-stream"), HTTPHeader("Cache-Control", "no-store")],
            body: .stream(stream))
    }
}

@Suite(.serialized) struct StreamTests {
    @Test func eventsArriveAsTheyAreSent() throws {
        let fanOut = FanOut()
        let server = try TestServer({ $0.streamHeartbeatSeconds = 0 }) { _ in FanOut.response(fanOut.stream()) }
        let client = try server.client()
        try client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try client.readResponse(bodyless: true)
        #expect(head.status == 200)
        #expect(head.header("transfer-encoding") == "chunked")
        #expect(head.header("content-type") == "text/event-stream")
        #expect(eventually(within: 5) { fanOut.openCount == 1 })
        for index in 1...3 {
            let sender = Thread { fanOut.broadcast("data: \(index)\n\n") }
            sender.start()
            #expect(try client.readChunk() == Array("data: \(index)\n\n".utf8))
        }
        // Closed by the application: the end of the body, and the connection stays usable.
        fanOut.streams.first?.close()
        #expect(try client.readChunk() == nil)
        #expect(try client.readUntilQuiet(seconds: 0.2).isEmpty)
        #expect(eventually(within: 5) { fanOut.ended == [.closed] })
        #expect(server.server.openStreams == 0)
        #expect(server.server.requestsInFlight == 0)
    }

    /// A client that leaves is noticed at the next heartbeat, without the application writing anything.
    @Test func clientGoingAwayEndsTheStream() throws {
        let fanOut = FanOut()
        let server = try TestServer({ $0.streamHeartbeatSeconds = 1 }) { _ in FanOut.response(fanOut.stream()) }
        var client: RawHTTPConnection? = try server.client()
        try client!.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client!.readResponse(bodyless: true).status == 200)
        #expect(eventually(within: 5) { fanOut.openCount == 1 })
        #expect(try client!.readChunk() == Array(":\n".utf8))  // the heartbeat, after a second of silence
        client = nil  // closes the socket
        #expect(eventually(within: 5) { fanOut.ended == [.clientGone] })
        #expect(server.server.openStreams == 0)
    }

    /// A client that stops reading cannot make the server buffer without bound.
    @Test func clientNotReadingIsCutOff() throws {
        let stream = HTTPEventStream(maxPendingBytes: 64 << 10)
        let server = try TestServer({ $0.streamHeartbeatSeconds = 0 }) { _ in FanOut.response(stream) }
        let client = try server.client()
        try client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse(bodyless: true).status == 200)
        let event = Array(repeating: UInt8(0x61), count: 8192)
        var accepted = 0
        while stream.send(event) { accepted += 1; if accepted > 100_000 { break } }
        #expect(accepted < 100_000)
        #expect(!stream.isOpen)
    }

    /// SIGTERM's graceful stop ends every stream cleanly (the end of the body, then the connection closes).
    @Test func gracefulStopEndsStreams() throws {
        let fanOut = FanOut()
        let server = try TestServer({ $0.streamHeartbeatSeconds = 0 }) { _ in FanOut.response(fanOut.stream()) }
        let clients = try (0..<5).map { _ in try server.client() }
        for client in clients {
            try client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse(bodyless: true).status == 200)
        }
        #expect(eventually(within: 5) { fanOut.openCount == 5 })
        fanOut.broadcast("data: last\n\n")
        let started = Date()
        server.server.shutdown(drainSeconds: 10)
        #expect(Date().timeIntervalSince(started) < 2)
        for client in clients {
            #expect(try client.readChunk() == Array("data: last\n\n".utf8))
            #expect(try client.readChunk() == nil)
            #expect(client.isClosedByPeer())
        }
        #expect(fanOut.ended == Array(repeating: .serverStopping, count: 5))
    }
}

@Suite(.serialized) struct DeferredResponseTests {
    /// With one server thread, a request whose answer comes later does not hold it: another client is answered
    /// meanwhile.
    @Test func deferredAnswerHoldsNoThread() throws {
        let gate = DispatchSemaphore(value: 0)
        let server = try TestServer({ $0.threads = 1 }) { request in
            guard request.target == Array("/slow".utf8) else { return text(200, "fast") }
            let later = HTTPDeferredResponse()
            Thread {
                gate.wait()
                later.complete(text(200, "slow"))
            }.start()
            return HTTPResponse(later)
        }
        let slow = try server.client()
        try slow.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(eventually(within: 5) { server.server.requestsInFlight == 1 })
        let started = Date()
        #expect(try server.client().request("GET", "/fast").text == "fast")
        #expect(Date().timeIntervalSince(started) < 1)
        gate.signal()
        #expect(try slow.readResponse().text == "slow")
        #expect(try slow.request("GET", "/fast").text == "fast")  // kept alive
    }

    @Test func answerGivenBeforeTheServerAsksIsSent() throws {
        let server = try TestServer { _ in
            let later = HTTPDeferredResponse()
            later.complete(text(201, "at once"))
            return HTTPResponse(later)
        }
        let response = try server.client().request("GET", "/")
        #expect(response.status == 201)
        #expect(response.text == "at once")
    }

    /// A request whose body is still arriving when a graceful stop closes the listener is read to its end, and
    /// its answer may still come later (a queued write, a blob's verification): it is sent, not replaced by a
    /// 503. (The stop used to refuse every deferred answer from its first moment, and the request in flight it
    /// waited for got `503 service unavailable`.)
    @Test func aRequestInFlightMayStillDeferItsAnswerDuringAGracefulStop() throws {
        let server = try TestServer({ $0.maxRequestBodyBytes = 100 }) { request in
            let later = HTTPDeferredResponse()
            let body = request.body ?? []
            Thread {
                usleep(100_000)
                later.complete(text(201, "wrote \(body.count) bytes"))
            }.start()
            return HTTPResponse(later)
        }
        let client = try server.client()
        try client.send("POST /write HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345")
        #expect(eventually(within: 5) { server.server.requestsInFlight == 1 })
        let stopped = DispatchSemaphore(value: 0)
        let http = server.server!
        Thread {
            http.shutdown(drainSeconds: 5)
            stopped.signal()
        }.start()
        let port = Int(server.port)
        #expect(eventually(within: 5) { (try? RawHTTPConnection(host: "127.0.0.1", port: port, timeout: 1)) == nil }, "the listener closed")
        try client.send("67890")
        let answer = try client.readResponse()
        #expect(answer.status == 201 && answer.text == "wrote 10 bytes", "\(answer.status) \(answer.text)")
        #expect(stopped.wait(timeout: .now() + 5) == .success)
    }

    @Test func stoppingAnswersWaitingRequestsWith503() throws {
        let server = try TestServer { _ in HTTPResponse(HTTPDeferredResponse()) }  // never completed
        let client = try server.client()
        try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(eventually(within: 5) { server.server.requestsInFlight == 1 })
        server.server.shutdown(drainSeconds: 0.5)
        #expect(try client.readResponse().status == 503)
    }
}
