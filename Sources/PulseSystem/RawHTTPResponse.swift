/// An answer as read off the wire.
public struct RawHTTPResponse: Sendable {
    /// Every byte of the answer, status line to the end of the body (chunk framing included).
    public var raw: [UInt8]
    public var status: Int
    /// Header lines in the order received, names lowercased.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(raw: [UInt8], status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.raw = raw
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name` (any case).
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name == lower }?.value
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}
