/// The request method. Only GET and HEAD get names; anything else is kept as sent.
public enum HTTPMethod: Sendable, Equatable, CustomStringConvertible {
    case get
    case head
    case other(String)

    public var description: String {
        switch self {
        case .get: "GET"
        case .head: "HEAD"
        case let .other(name): name
        }
    }
}

/// One request as a responder sees it. Bytes, not `String`s: matching runs on the hot path.
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// The request-target exactly as received (path and query, nothing percent-decoded).
    public var target: [UInt8]
    /// The request headers the server was asked to collect (`HTTPServer.Configuration.requestHeaders`).
    public var headers: HTTPRequestHeaders

    public init(method: HTTPMethod, target: [UInt8], headers: HTTPRequestHeaders = HTTPRequestHeaders()) {
        self.method = method
        self.target = target
        self.headers = headers
    }

    /// Convenience for tests: `HTTPRequest(.get, "/path", ["If-None-Match": "\"x\""])`.
    public init(_ method: HTTPMethod, _ target: String, _ headers: [String: String] = [:]) {
        var collected = HTTPRequestHeaders()
        for (name, value) in headers { collected.add(name, Array(value.utf8)) }
        self.init(method: method, target: Array(target.utf8), headers: collected)
    }
}

/// A few request header values, looked up by lowercase name.
public struct HTTPRequestHeaders: Sendable {
    private var names: [String] = []
    private var values: [[UInt8]] = []

    public init() {}

    /// Adds a header (the name is lowercased; a repeated name is joined with ", " as RFC 9110 allows).
    public mutating func add(_ name: String, _ value: [UInt8]) {
        let lower = name.lowercased()
        if let index = names.firstIndex(of: lower) {
            values[index] += Array(", ".utf8) + value
        } else {
            names.append(lower)
            values.append(value)
        }
    }

    /// Adds a header whose name is already lowercase and not present yet (the server's fast path).
    mutating func append(lowercaseName name: String, _ value: [UInt8]) {
        names.append(name)
        values.append(value)
    }

    /// The value of header `name` (give it in lowercase), or nil when absent.
    public subscript(_ name: String) -> [UInt8]? {
        for index in names.indices where names[index] == name { return values[index] }
        return nil
    }
}
