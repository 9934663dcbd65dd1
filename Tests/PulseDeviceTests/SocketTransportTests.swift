import Foundation
import PulseHTTPServer
import Synchronization
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseDevice

/// The event stream's transport: each piece of a chunked answer is handed over when it arrives (not when the
/// answer ends), and a cancel from another thread ends a read that is waiting for the next one.
@Suite struct SocketTransportTests {
    final class Trickle: HTTPResponder {
        let streams = Mutex<[HTTPEventStream]>([])
        func respond(to request: HTTPRequest) -> HTTPResponse {
            let stream = HTTPEventStream()
            streams.withLock { $0.append(stream) }
            return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "text/event-stream")], body: .stream(stream))
        }
        func finished(_ exchange: HTTPExchange) {}
        var stream: HTTPEventStream? { streams.withLock { $0.first } }
    }

    @Test func piecesArriveAsSentAndACancelEndsAWaitingRead() throws {
        let responder = Trickle()
        var settings = HTTPServer.Configuration()
        settings.listen = "127.0.0.1:0"
        settings.threads = 1
        let server = try HTTPServer(configuration: settings, responder: responder)
        defer { server.stop() }
        let received = Mutex<[String]>([])
        let cancellation = Cancellation()
        let ended = DispatchSemaphore(value: 0)
        let outcome = Mutex<(any Error)?>(nil)
        Thread {
            do {
                try SocketTransport(timeout: 30).exchange(
                    DeviceRequest(url: URL(string: "http://127.0.0.1:\(server.port)/events?x=1")!), cancellation: cancellation
                ) { event in
                    if case let .data(bytes) = event { received.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) } }
                }
            } catch { outcome.withLock { $0 = error } }
            ended.signal()
        }.start()
        #expect(eventually(within: 5) { responder.stream != nil })
        responder.stream?.send(Array("data: one\n\n".utf8))
        #expect(eventually(within: 2) { received.withLock { $0.joined() } == "data: one\n\n" }, "the first piece arrives before the answer ends")
        responder.stream?.send(Array("data: two\n\n".utf8))
        #expect(eventually(within: 2) { received.withLock { $0.joined() } == "data: one\n\ndata: two\n\n" })
        let cancelledAt = Date()
        cancellation.cancel()
        #expect(ended.wait(timeout: .now() + 2) == .success, "the cancel ended the waiting read")
        #expect(Date().timeIntervalSince(cancelledAt) < 1)
        #expect(outcome.withLock { $0 } is CancellationError)
    }
}
