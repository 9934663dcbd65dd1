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

/// Route matching on a request target's bytes, without scanning the whole target or building a string: each
/// check compares only the bytes of its literal (a signed keys request's target is 100 bytes and more).
public enum TargetMatch {
    /// True when `target` holds `literal` at `offset`.
    @inlinable public static func has(_ target: [UInt8], _ literal: [UInt8], at offset: Int = 0) -> Bool {
        guard offset >= 0, target.count - offset >= literal.count else { return false }
        var index = 0
        while index < literal.count {
            if target[offset + index] != literal[index] { return false }
            index += 1
        }
        return true
    }

    /// True when the path of `target` (before `?`) ends with `literal`, which starts at `offset`.
    @inlinable public static func ends(_ target: [UInt8], _ literal: [UInt8], at offset: Int = 0) -> Bool {
        guard has(target, literal, at: offset) else { return false }
        let end = offset + literal.count
        return end == target.count || target[end] == UInt8(ascii: "?")
    }

    /// True when from `offset` the path of `target` is one non-empty segment (no `/`) followed by exactly `suffix`.
    @inlinable public static func segment(_ target: [UInt8], at offset: Int, then suffix: [UInt8]) -> Bool {
        var index = offset
        while index < target.count {
            let byte = target[index]
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") { break }
            index += 1
        }
        return index > offset && ends(target, suffix, at: index)
    }
}
