import Foundation
import PulseHTTPServer
import PulseSystem

/// A server on a free loopback port whose responder is a closure; `exchanges` collects the finished ones.
final class TestServer: HTTPResponder, @unchecked Sendable {
    let answer: @Sendable (HTTPRequest) -> HTTPResponse
    private let lock = NSLock()
    private var finishedExchanges: [HTTPExchange] = []
    private(set) var server: HTTPServer!

    init(_ configure: (inout HTTPServer.Configuration) -> Void = { _ in },
         answer: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws {
        self.answer = answer
        var configuration = HTTPServer.Configuration()
        configuration.listen = "127.0.0.1:0"
        configuration.threads = 2
        configure(&configuration)
        server = try HTTPServer(configuration: configuration, responder: self)
    }

    deinit { server?.stop() }

    var port: UInt16 { server.port }

    /// A raw connection to the server, from the loopback address `source` if given.
    func client(source: String? = nil, timeout: Double = 10) throws -> RawHTTPConnection {
        try RawHTTPConnection(host: "127.0.0.1", port: Int(server.port), timeout: timeout, source: source)
    }

    func respond(to request: HTTPRequest) -> HTTPResponse { answer(request) }

    func finished(_ exchange: HTTPExchange) { lock.withLock { finishedExchanges.append(exchange) } }

    /// The finished exchanges once there are `count` (or after five seconds): libmicrohttpd reports one after
    /// its last byte went out, so a client can have the response first.
    func exchanges(count: Int) -> [HTTPExchange] {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            let current = lock.withLock { finishedExchanges }
            if current.count >= count { return current }
            usleep(2_000)
        }
        return lock.withLock { finishedExchanges }
    }
}

/// A plain text answer.
func text(_ status: Int, _ body: String, _ headers: [HTTPHeader] = []) -> HTTPResponse {
    HTTPResponse(status: status, headers: headers, body: .bytes(Array(body.utf8)))
}
