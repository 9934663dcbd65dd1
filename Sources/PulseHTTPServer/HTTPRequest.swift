/// The request method. GET, HEAD, POST and OPTIONS get names; anything else is kept as sent (always a token:
/// the server refuses other bytes with 400 before a responder sees the request).
public enum HTTPMethod: Sendable, Equatable, CustomStringConvertible {
    case get
    case head
    case post
    case options
    case other(String)

    public init(_ name: String) {
        switch name {
        case "GET": self = .get
        case "HEAD": self = .head
        case "POST": self = .post
        case "OPTIONS": self = .options
        default: self = .other(name)
        }
    }

    public var description: String {
        switch self {
        case .get: "GET"
        case .head: "HEAD"
        case .post: "POST"
        case .options: "OPTIONS"
        case let .other(name): name
        }
    }

    /// Same method name: `.other("GET") == .get`.
    public static func == (lhs: HTTPMethod, rhs: HTTPMethod) -> Bool {
        switch (lhs, rhs) {
        case (.get, .get), (.head, .head), (.post, .post), (.options, .options): true
        case (.other, _), (_, .other): lhs.description == rhs.description
        default: false
        }
    }
}

/// One request as a responder sees it. Bytes, not `String`s: matching runs on the hot path.
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// The request-target exactly as received (path and query, nothing percent-decoded). Only visible ASCII:
    /// the server answers 400 to anything else.
    public var target: [UInt8]
    /// The request headers the server was asked to collect (`HTTPServer.Configuration.requestHeaders`),
    /// every line of each.
    public var headers: HTTPRequestHeaders
    /// The address of the peer (for a request through a proxy: the proxy's). Nil only in hand-made requests.
    public var client: HTTPClientAddress?
    /// The request body, when the request had one (at most `Configuration.maxRequestBodyBytes`); nil without.
    public var body: [UInt8]?

    public init(
        method: HTTPMethod, target: [UInt8], headers: HTTPRequestHeaders = HTTPRequestHeaders(),
        client: HTTPClientAddress? = nil, body: [UInt8]? = nil
    ) {
        self.method = method
        self.target = target
        self.headers = headers
        self.client = client
        self.body = body
    }

    /// Convenience for tests: `HTTPRequest(.get, "/path", ["If-None-Match": "\"x\""])`.
    public init(_ method: HTTPMethod, _ target: String, _ headers: [String: String] = [:], body: [UInt8]? = nil) {
        var collected = HTTPRequestHeaders()
        for (name, value) in headers { collected.add(name, Array(value.utf8)) }
        self.init(method: method, target: Array(target.utf8), headers: collected, body: body)
    }
}

/// Request header values by lowercase name, each header line kept (a name may repeat, e.g. two
/// `If-None-Match` lines from a cache, or one `X-Forwarded-For` per proxy).
public struct HTTPRequestHeaders: Sendable {
    private var names: [String] = []
    private var lines: [[UInt8]] = []

    public init() {}

    /// Adds one header line (the name is lowercased; the value kept as given).
    public mutating func add(_ name: String, _ value: [UInt8]) {
        names.append(name.lowercased())
        lines.append(value)
    }

    /// Adds a line whose name is already lowercase (the server's path: the names come from its configuration).
    mutating func append(lowercaseName name: String, _ value: [UInt8]) {
        names.append(name)
        lines.append(value)
    }

    /// The value of header `name` (give it in lowercase): one line as is, several joined with ", " in the
    /// order received (RFC 9110 §5.3), nil when absent.
    public subscript(_ name: String) -> [UInt8]? {
        var found: [UInt8]?
        for index in names.indices where names[index] == name {
            if found == nil { found = lines[index] } else { found! += [0x2c, 0x20] + lines[index] }
        }
        return found
    }

    /// Every line of header `name` (lowercase), in the order received; empty when absent.
    public func values(_ name: String) -> [[UInt8]] {
        names.indices.filter { names[$0] == name }.map { lines[$0] }
    }

    /// True when no header was collected.
    public var isEmpty: Bool { names.isEmpty }
}
