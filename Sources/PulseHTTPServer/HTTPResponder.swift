/// Answers requests. Called on the server's threads, concurrently: implementations must be thread-safe
/// and should not block for long (a slow answer holds one of the few server threads).
public protocol HTTPResponder: Sendable {
    /// The answer to `request`.
    func respond(to request: HTTPRequest) -> HTTPResponse
    /// Called once per request when its response was sent (or the connection failed): the access log hook.
    func finished(_ exchange: HTTPExchange)
}

/// One finished request, for the access log.
public struct HTTPExchange: Sendable {
    /// The client's IP address as text (`127.0.0.1`, `::1`), `-` if unknown.
    public var client: [UInt8]
    /// The method as sent (empty when the request line never arrived in full).
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
