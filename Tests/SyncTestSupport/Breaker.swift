import Foundation
import PulseHTTPServer

/// A responder that forwards to a real one and changes one thing: the broken servers of the tests. `alter`
/// gets the request and the real answer (deferred answers are waited for on a thread of their own, never on
/// a server thread) and returns what to send instead; `intercept` may answer before the real responder runs.
public final class Breaker: HTTPResponder {
    let inner: any HTTPResponder
    let intercept: @Sendable (HTTPRequest) -> HTTPResponse?
    let rewrite: @Sendable (HTTPRequest) -> HTTPRequest
    let alter: @Sendable (HTTPRequest, HTTPResponse) -> HTTPResponse

    public init(
        _ inner: any HTTPResponder, intercept: @escaping @Sendable (HTTPRequest) -> HTTPResponse? = { _ in nil },
        rewrite: @escaping @Sendable (HTTPRequest) -> HTTPRequest = { $0 },
        alter: @escaping @Sendable (HTTPRequest, HTTPResponse) -> HTTPResponse = { $1 }
    ) {
        self.inner = inner
        self.intercept = intercept
        self.rewrite = rewrite
        self.alter = alter
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        if let answer = intercept(request) { return answer }
        let request = rewrite(request)
        let response = inner.respond(to: request)
        guard let deferred = response.deferred else { return alter(request, Self.plain(response)) }
        let later = HTTPDeferredResponse()
        let alter = self.alter
        Thread {
            let answer = deferred.wait(timeout: 10) ?? HTTPResponse(status: 503, body: .bytes(Array("{\"error\":\"unavailable\"}".utf8)))
            later.complete(alter(request, Self.plain(answer)))
        }.start()
        return HTTPResponse(later)
    }

    public func finished(_ exchange: HTTPExchange) { inner.finished(exchange) }

    /// The same answer built afresh (a prepared `SharedResponse` is sent as prepared, ignoring edits), a body
    /// sent from a shared buffer (a signed answer's) as its bytes, so `alter` can read and change it.
    public static func plain(_ response: HTTPResponse) -> HTTPResponse {
        var body = response.body
        if case let .buffer(buffer, offset, count) = body { body = .bytes(buffer[offset..<(offset + count)]) }
        return HTTPResponse(status: response.status, headers: response.headers, body: body, note: response.note)
    }

    /// `response` with header `name` set to `value` (replaced, or added).
    public static func setting(_ name: String, _ value: String, in response: HTTPResponse) -> HTTPResponse {
        var copy = response
        copy.headers.removeAll { $0.name.lowercased() == name.lowercased() }
        copy.headers.append(HTTPHeader(name, value))
        return copy
    }

    /// A JSON answer.
    public static func json(_ status: Int, _ body: String, headers: [HTTPHeader] = []) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [HTTPHeader("Content-Type", "application/json"), HTTPHeader("Cache-Control", "no-store")] + headers,
            body: .bytes(Array(body.utf8)))
    }

    /// The path of a request (without its query).
    public static func path(_ request: HTTPRequest) -> String {
        String(decoding: request.target.prefix { $0 != UInt8(ascii: "?") }, as: UTF8.self)
    }
}

/// Counts requests by path prefix, and forwards them.
public final class CountingResponder: HTTPResponder {
    let inner: any HTTPResponder
    private let lock = NSLock()
    nonisolated(unsafe) private var seen: [String] = []

    public init(_ inner: any HTTPResponder) { self.inner = inner }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        lock.withLock { seen.append("\(request.method) \(String(decoding: request.target, as: UTF8.self))") }
        return inner.respond(to: request)
    }

    public func finished(_ exchange: HTTPExchange) { inner.finished(exchange) }

    /// Requests seen so far whose "METHOD target" starts with `prefix`.
    public func count(_ prefix: String) -> Int { lock.withLock { seen.filter { $0.hasPrefix(prefix) }.count } }

    public var requests: [String] { lock.withLock { seen } }

    public func reset() { lock.withLock { seen = [] } }
}
