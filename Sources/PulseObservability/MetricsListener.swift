import PulseHTTPServer
import PulseMetrics

/// The listener of `--metrics-listen`: a second, small HTTP server that answers `GET /metrics` (and `HEAD`)
/// with the registry's exposition, 404 for any other path and 405 for any other method. It is apart from
/// the public port, so a scrape never competes with phones for connections and `/metrics` is never public
/// by accident; nothing listens unless the option is given.
public final class MetricsListener: Sendable {
    let server: HTTPServer
    /// Its connections at most (and one thread): what a server counts in its descriptor reserve for it.
    public static let maxConnections = 16
    public static let threads = 1

    /// Listens on `address` (`host:port`; port 0 picks a free one) and serves `registry` at once.
    /// - Throws: `HTTPServerError` when the address is bad, in use or not permitted.
    public init(listen address: String, registry: MetricsRegistry) throws(HTTPServerError) {
        var configuration = HTTPServer.Configuration()
        configuration.listen = address
        // A scraper or two and a curl: one thread, a few connections, all from the same address.
        configuration.threads = Self.threads
        configuration.maxConnections = Self.maxConnections
        configuration.maxConnectionsPerIP = 0
        configuration.listenBacklog = 16
        server = try HTTPServer(configuration: configuration, responder: MetricsEndpoint(registry: registry))
    }

    /// The address listened on as `host:port` (the real port when 0 was asked).
    public var boundAddress: String { server.boundAddress }
    public var port: UInt16 { server.port }

    /// Closes the listener (after the main server stopped, so the last scrape can still see the drain).
    public func stop() { server.shutdown(drainSeconds: 1) }

    /// `--metrics-listen`'s check before anything starts: `host:port` with an IP address literal
    /// (`127.0.0.1:9464`, `[::1]:9464`, `:9464` for every address). The message is the start error's text.
    public static func checkAddress(_ text: String) -> String? {
        let problem = "--metrics-listen must be host:port with an IP address, e.g. 127.0.0.1:9464 or [::1]:9464, got \"\(text)\""
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]),
              port > 0 || text.hasSuffix(":0")
        else { return problem }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
            return host.contains(":") && host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) ? nil : problem
        }
        if host.isEmpty || host == "*" || host == "localhost" { return nil }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy({ part in part.count <= 3 && UInt8(part) != nil }) ? nil : problem
    }
}

/// `GET /metrics` and nothing else.
struct MetricsEndpoint: HTTPResponder {
    let registry: MetricsRegistry
    static let path = Array("/metrics".utf8)
    static let notFound = SharedResponse(HTTPResponse(
        status: 404, headers: [HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("Cache-Control", "no-store")],
        body: .bytes(Array("not found: the metrics are at /metrics\n".utf8))))
    static let notAllowed = SharedResponse(HTTPResponse(
        status: 405, headers: [HTTPHeader("Allow", "GET, HEAD"), HTTPHeader("Content-Type", "text/plain; charset=utf-8")],
        body: .bytes(Array("method not allowed\n".utf8))))

    func respond(to request: HTTPRequest) -> HTTPResponse {
        let path = request.target.prefix { $0 != UInt8(ascii: "?") }
        guard path.elementsEqual(Self.path) else { return HTTPResponse(Self.notFound, note: "no-route") }
        guard request.method == .get || request.method == .head else { return HTTPResponse(Self.notAllowed, note: "method") }
        return HTTPResponse(
            status: 200,
            headers: [HTTPHeader("Content-Type", MetricsRegistry.contentType), HTTPHeader("Cache-Control", "no-store")],
            body: .bytes(registry.exposition()), note: "metrics")
    }

    func finished(_ exchange: HTTPExchange) {}
}
