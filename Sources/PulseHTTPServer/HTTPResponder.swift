/// Answers requests. Called on the server's threads (`HTTPServer.Configuration.threads`, each an event loop
/// serving many connections), concurrently: implementations must be thread-safe.
///
/// **Blocking.** A quick blocking call is fine in `respond`: a SQLite query that takes under a millisecond, one
/// round trip to a database on the same network. It holds the thread, and every connection that thread serves,
/// for that long, so give the server a few threads per core when responders wait on I/O. Anything slower, or
/// anything that waits on another party (a remote service, a lock held for long, a file of unknown size), goes
/// to another thread: return `HTTPResponse(HTTPDeferredResponse)` at once and complete it from there; the
/// connection waits suspended and no server thread is held. Open-ended answers (Server-Sent Events) are
/// `HTTPEventStream` bodies, also without a thread each.
///
/// Requests reach `respond` only after the server's checks (RFC 9112 framing, body limits; see `RequestHead`).
public protocol HTTPResponder: Sendable {
    /// The answer to `request`: immediate, prepared (`SharedResponse`), deferred or a stream.
    func respond(to request: HTTPRequest) -> HTTPResponse
    /// Called once per request when its response was sent (or the connection failed), on a server thread, also
    /// for requests the server answered itself (400, 413, 414, 431): the access log hook.
    func finished(_ exchange: HTTPExchange)
}

/// One finished request, for the access log.
public struct HTTPExchange: Sendable {
    /// The client's IP address as text (`127.0.0.1`, `::1`), `-` if unknown.
    public var client: [UInt8]
    /// The method as sent (empty when the request line never arrived in full). Not yet checked when the server
    /// refused the request: escape it before writing it anywhere a terminal may show it.
    public var method: String
    public var target: [UInt8]
    /// The status sent, or 0 when libmicrohttpd answered on its own (e.g. 431 for oversized headers).
    public var status: Int
    /// Body bytes in the response (0 for HEAD and 304).
    public var bodyBytes: Int
    /// From the request line to the end of sending, in nanoseconds.
    public var durationNanoseconds: UInt64
    /// The responder's note (cache outcome).
    public var note: String
    /// False when the connection failed or timed out before the response was sent completely.
    public var completed: Bool

    public init(
        client: [UInt8], method: String, target: [UInt8], status: Int, bodyBytes: Int,
        durationNanoseconds: UInt64, note: String, completed: Bool
    ) {
        self.client = client
        self.method = method
        self.target = target
        self.status = status
        self.bodyBytes = bodyBytes
        self.durationNanoseconds = durationNanoseconds
        self.note = note
        self.completed = completed
    }
}
