import PulseHTTPServer

/// Counts a finished exchange (the access log's hook): the route from the target, the status class, the
/// duration, and whatever the responder's note says. Runs once per request on a server thread: atomic adds
/// only, no lock, no allocation.
public protocol ExchangeMeter: Sendable {
    func record(_ exchange: HTTPExchange)
}

/// A responder with its requests counted: answers as `inner` does; each finished exchange goes to `meter`,
/// then to `inner` (the access log). The routes stay as they are: the metrics are kept apart from them.
public final class MeteredResponder: HTTPResponder {
    let inner: any HTTPResponder
    let meter: any ExchangeMeter

    public init(_ inner: any HTTPResponder, meter: any ExchangeMeter) {
        self.inner = inner
        self.meter = meter
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse { inner.respond(to: request) }

    public func finished(_ exchange: HTTPExchange) {
        meter.record(exchange)
        inner.finished(exchange)
    }
}

/// The path of a request target (what is before `?`).
@inlinable public func targetPath(_ target: [UInt8]) -> ArraySlice<UInt8> {
    target[..<(target.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex)]
}

extension ArraySlice<UInt8> {
    /// True when the slice is exactly `text` (an ASCII literal).
    @inlinable public func equals(_ text: StaticString) -> Bool {
        text.withUTF8Buffer { count == $0.count && elementsEqual($0) }
    }

    /// True when the slice starts with `text` (an ASCII literal).
    @inlinable public func begins(with text: StaticString) -> Bool {
        text.withUTF8Buffer { count >= $0.count && self.prefix($0.count).elementsEqual($0) }
    }
}
