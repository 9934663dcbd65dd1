import PulseHTTPServer

/// What the access log says about one request, as a JSON line (`--log-format json`; the text line stays
/// AccessLog's, PulseOrigin, as it always was). Built from bytes into one buffer, without `String` formatting: it
/// runs once per request.
///
/// `Body` is `<method> <path> <status>`; the attributes are OpenTelemetry's HTTP semantic
/// conventions (`http.request.method`, `url.path`, `url.query`, `http.response.status_code`,
/// `http.response.body.size`, `http.server.request.duration` in seconds, `client.address`, and `http.route`,
/// the route's template such as `/api/sync/asset/:hash`, when the server names it) and `pulse.note`,
/// with `pulse.aborted: true` when the client left early. `WARN` for a 5xx, `INFO` otherwise.
///
/// Like the text line, it never holds more of the request than its method and target: no header (so no `Authorization`, no
/// `X-Pulse-Device`), no body (so no code, token or key).
public struct AccessRecord: Sendable {
    /// The finished request as the HTTP layer reports it to the access log.
    public var exchange: HTTPExchange
    /// The route's template (`/api/sync/keys`, `/api/sync/asset/:hash`, `other`), never the raw path.
    public var route: String?

    public init(_ exchange: HTTPExchange, route: String? = nil) {
        self.exchange = exchange
        self.route = route
    }

    /// The JSON line, with its newline, stamped now by `clock`.
    public func json(clock: LogClock, resource: LogResource) -> [UInt8] {
        json(resource) { clock.appendNow(to: &$0) }
    }

    /// The JSON line, with its newline, with `timestamp` (from `LogClock`).
    public func json(timestamp: [UInt8], resource: LogResource) -> [UInt8] {
        json(resource) { $0 += timestamp }
    }

    /// One buffer, reserved once: no array of its own for the body or the timestamp; the path is scanned once
    /// for what needs escaping (usually nothing) and copied into the body and `url.path`.
    private func json(_ resource: LogResource, time: (inout [UInt8]) -> Void) -> [UInt8] {
        let (method, target, status) = (exchange.method, exchange.target, exchange.status)
        let queryStart = target.firstIndex(of: 0x3f) ?? target.endIndex
        let path = target[..<queryStart]
        let plain = JSONText.isPlainURL(path)
        var line = LogLine(severity: status >= 500 ? .warn : .info, capacity: 480 + 3 * target.count + 2 * method.utf8.count, time: time)
        if method.isEmpty { line.bodyByte(0x2d) } else { line.bodyText(method) }
        line.bodyByte(0x20)
        if path.isEmpty { line.bodyByte(0x2d) } else { line.bodyURL(path, plain: plain) }
        line.bodyByte(0x20)
        line.bodyDecimal(status)
        line.closeBody()
        if !method.isEmpty { line.attribute(Keys.method, method) }
        if !path.isEmpty { line.attribute(Keys.path, url: path, plain: plain) }
        if let route { line.attribute(Keys.route, route) }
        if queryStart < target.endIndex { line.attribute(Keys.query, url: target[(queryStart + 1)...]) }
        line.attribute(Keys.status, status)
        line.attribute(Keys.size, exchange.bodyBytes)
        line.attribute(Keys.duration, secondsFromNanoseconds: exchange.durationNanoseconds)
        line.attribute(Keys.client, bytes: exchange.client[...])
        line.attribute(Keys.note, exchange.note)
        if !exchange.completed { line.attribute(Keys.aborted, true) }
        return line.finished(resource)
    }

    /// OpenTelemetry's HTTP semantic conventions where they name the field, `pulse.*` otherwise.
    private enum Keys {
        static let method = LogLine.Key("http.request.method")
        static let path = LogLine.Key("url.path")
        static let route = LogLine.Key("http.route")
        static let query = LogLine.Key("url.query")
        static let status = LogLine.Key("http.response.status_code")
        static let size = LogLine.Key("http.response.body.size")
        static let duration = LogLine.Key("http.server.request.duration")
        static let client = LogLine.Key("client.address")
        static let note = LogLine.Key("pulse.note")
        static let aborted = LogLine.Key("pulse.aborted")
    }
}
