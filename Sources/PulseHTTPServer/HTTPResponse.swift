/// One response header.
public struct HTTPHeader: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// Where a response body comes from.
public enum HTTPBody: Sendable {
    /// No body (304, or an empty representation).
    case empty
    /// Bytes copied once into the server.
    case bytes([UInt8])
    /// A slice of a buffer kept in memory; sent without copying, the buffer lives as long as a send needs it.
    case buffer(ByteBuffer, offset: Int, count: Int)
    /// A slice of an open file, sent with sendfile; the server takes over the descriptor.
    case file(OpenFile, offset: Int, count: Int)
    /// An open-ended body the application writes into from any thread (Server-Sent Events): sent chunked
    /// (HTTP/1.1) or until the connection closes (HTTP/1.0), without holding a thread while it waits.
    case stream(HTTPEventStream)

    /// The number of body bytes (what Content-Length says); 0 for a stream, whose length is unknown.
    public var count: Int {
        switch self {
        case .empty, .stream: 0
        case let .bytes(bytes): bytes.count
        case let .buffer(_, _, count), let .file(_, _, count): count
        }
    }
}

/// What a responder answers. Either built per request, or a `SharedResponse` prepared once and reused.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [HTTPHeader]
    public var body: HTTPBody
    /// A short word for the access log, e.g. the cache outcome (`memory`, `disk`, `verified`).
    public var note: String
    /// When set, the server sends this prepared response instead of building one.
    public let shared: SharedResponse?
    /// When set, the answer comes later from another thread (`HTTPDeferredResponse.complete`); the other
    /// fields are ignored.
    public let deferred: HTTPDeferredResponse?

    public init(status: Int, headers: [HTTPHeader] = [], body: HTTPBody = .empty, note: String = "-") {
        self.status = status
        self.headers = headers
        self.body = body
        self.note = note
        self.shared = nil
        self.deferred = nil
    }

    /// The prepared response `shared`, annotated with `note` for the access log.
    public init(_ shared: SharedResponse, note: String) {
        self.status = shared.template.status
        self.headers = shared.template.headers
        self.body = shared.template.body
        self.note = note
        self.shared = shared
        self.deferred = nil
    }

    /// An answer given later by `deferred.complete(_:)`, from any thread: the connection waits suspended,
    /// holding no server thread, so the responder can hand slow work (hashing a file, a remote call) to
    /// other threads.
    public init(_ deferred: HTTPDeferredResponse) {
        self.status = 0
        self.headers = []
        self.body = .empty
        self.note = "-"
        self.shared = nil
        self.deferred = deferred
    }

    /// The value of response header `name` (case-insensitive), for tests and logs.
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }
}
