import Foundation
import PulseSystem

/// HTTP/1.1 over a plain socket (PulseSystem's `RawHTTPConnection`), one connection per exchange, the
/// answer handed over as it arrives. For the event stream of an `http://` server: FoundationNetworking's
/// URLSession (libcurl under swift-corelibs-foundation on Linux) keeps a core busy while a streaming answer
/// is silent, which twenty watching devices on one machine turn into seconds of delay for everyone else.
/// A blocked `recv` costs nothing. No TLS: `https://` servers keep `URLSessionTransport` (phones use their
/// platform's own HTTP stack anyway).
public struct SocketTransport: HTTPTransport {
    /// Seconds without a byte before the exchange fails (the event stream sends a heartbeat every 15 s).
    public let timeout: Double

    public init(timeout: Double = 60) { self.timeout = timeout }

    /// True for the URLs this transport can reach.
    public static func handles(_ url: URL) -> Bool { url.scheme?.lowercased() == "http" }

    public func exchange(_ request: DeviceRequest, cancellation: Cancellation?, _ receive: @escaping @Sendable (TransportEvent) throws -> Void) throws {
        guard Self.handles(request.url), let host = request.url.host else {
            throw DeviceError(.badInput, "\(request.url.absoluteString): the socket transport speaks plain http:// only")
        }
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        let target = (components?.percentEncodedPath.isEmpty == false ? components!.percentEncodedPath : "/")
            + (components?.percentEncodedQuery.map { "?" + $0 } ?? "")
        let port = request.url.port ?? 80
        let what = "\(request.method) \(request.url.absoluteString)"
        do {
            let connection = try RawHTTPConnection(host: host, port: port, timeout: timeout)
            defer { connection.close() }
            let token = cancellation?.onCancel { connection.shutdown() }
            defer { if let token { cancellation?.remove(token) } }
            var text = "\(request.method) \(target) HTTP/1.1\r\nHost: \(host.contains(":") ? "[\(host)]" : host):\(port)\r\n"
            for header in request.headers { text += "\(header.name): \(header.value)\r\n" }
            if let body = request.body { text += "Content-Length: \(body.count)\r\n" }
            text += "Connection: close\r\n\r\n"
            try connection.send(Array(text.utf8) + (request.body ?? []))
            let head = try connection.readHead()
            var headers: [String: String] = [:]
            for header in head.headers where headers[header.name] == nil { headers[header.name] = header.value }
            try receive(.head(status: head.status, headers: headers))
            try connection.readBody(of: head, bodyless: request.method == "HEAD") { try receive(.data($0)) }
        } catch let failure as RawHTTPConnection.Failure {
            if cancellation?.isCancelled == true { throw CancellationError() }
            throw DeviceError(.network, "\(what): \(failure)")
        }
        if cancellation?.isCancelled == true { throw CancellationError() }
    }
}

extension SyncClient {
    /// The same device (signer, clock, meter) over another transport.
    public func with(transport: any HTTPTransport) -> SyncClient {
        SyncClient(server: server, transport: transport, signer: signer, clock: clock, meter: meter, maxRetryAfter: maxRetryAfter)
    }

    /// The client for a long-lived stream: over a socket for an `http://` server (see `SocketTransport`).
    public var forStreaming: SyncClient { SocketTransport.handles(server) ? with(transport: SocketTransport()) : self }
}
