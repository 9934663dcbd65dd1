import Foundation

/// The answers the server gives on its own, before or instead of the responder. Each closes the connection:
/// after a malformed or refused request, nothing that follows on the connection can be trusted to start a
/// new request.
final class ServerResponses: Sendable {
    let badRequest = ServerResponses.closing(400, "bad request\n")
    let bodyTooLarge = ServerResponses.closing(413, "request body too large\n")
    let unavailable = ServerResponses.closing(503, "service unavailable\n")
    /// The request of a connection refused at `maxConnections`, and at `maxConnectionsPerIP`.
    let connectionLimit = ServerResponses.closing(503, "too many connections\n", [HTTPHeader("Retry-After", "1")])
    let addressLimit = ServerResponses.closing(
        503, "too many connections from this address\n", [HTTPHeader("Retry-After", "1")])

    private static func closing(_ status: Int, _ text: String, _ extra: [HTTPHeader] = []) -> SharedResponse {
        SharedResponse(HTTPResponse(
            status: status,
            headers: [
                HTTPHeader("Content-Type", "text/plain; charset=utf-8"),
                HTTPHeader("Cache-Control", "no-store"),
            ] + extra + [HTTPHeader("Connection", "close")],
            body: .bytes(Array(text.utf8))))
    }

    /// The answer to a request on a connection refused for `refusal`, with its access log note.
    func refused(_ refusal: ConnectionRefusal) -> HTTPResponse {
        switch refusal {
        case .connectionLimit: HTTPResponse(connectionLimit, note: "connection-limit")
        case .addressLimit: HTTPResponse(addressLimit, note: "address-limit")
        }
    }

    /// A whole response as bytes, written straight to the socket when libmicrohttpd cannot build one: at the
    /// connection limits with too many refused connections waiting already (before it read anything), or when
    /// the request's head left no room in the connection's memory for the response headers.
    static func raw(_ status: Int, _ reason: String, _ text: String, extra: String = "") -> [UInt8] {
        Array(("HTTP/1.1 \(status) \(reason)\r\nContent-Type: text/plain; charset=utf-8\r\nCache-Control: no-store\r\n"
            + extra + "Connection: close\r\nContent-Length: \(text.utf8.count)\r\n\r\n" + text).utf8)
    }

    static let uriTooLong = raw(414, "URI Too Long", "request line too long\n")
    static let headersTooLarge = raw(431, "Request Header Fields Too Large", "request headers too large\n")
    static let badRequestRaw = raw(400, "Bad Request", "bad request\n")
    /// The 503 written at accept time (too many refused connections wait already), naming the limit that refused
    /// this one, as the 503 of a refused connection's request does.
    static func busy(_ refusal: ConnectionRefusal?) -> [UInt8] { refusal == .addressLimit ? busyAddress : busyConnections }
    private static let busyConnections = raw(503, "Service Unavailable", "too many connections\n", extra: "Retry-After: 1\r\n")
    private static let busyAddress = raw(503, "Service Unavailable", "too many connections from this address\n", extra: "Retry-After: 1\r\n")
    /// A prepared response libmicrohttpd could not allocate (`SharedResponse`): nothing of its is sent.
    static let outOfMemory = raw(503, "Service Unavailable", "service unavailable\n", extra: "Retry-After: 1\r\n")

    /// Writes `bytes` to `fd` without blocking (a fresh or idle socket's buffer holds them); best effort.
    static func write(_ bytes: [UInt8], to fd: Int32) {
        guard fd >= 0 else { return }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }
}
