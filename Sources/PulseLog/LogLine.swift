/// One JSON log line in the OpenTelemetry log data model's field names, built by appending bytes (no
/// `JSONEncoder`, no `String` formatting: the access log builds one per request):
///
///     {"Timestamp":"2026-12-03T10:52:46.123456Z","SeverityText":"INFO","SeverityNumber":9,"Body":"…",
///      "Attributes":{"http.request.method":"GET",…},"Resource":{"service.name":"pulse-origin",…}}
///
/// Keys are the caller's constants (OpenTelemetry semantic-convention names where one exists, `pulse.*`
/// otherwise) and written as they are; every value is escaped (`JSONText`), so whatever a client sent, the
/// line is one line of valid JSON in valid UTF-8.
public struct LogLine: Sendable {
    private var bytes: [UInt8]
    private var attributes = false

    /// Starts the line: `Timestamp`, `SeverityText`, `SeverityNumber`, `Body` (escaped).
    /// - Parameters:
    ///   - timestamp: from `LogClock`.
    ///   - capacity: bytes to reserve, to grow the buffer once.
    public init(timestamp: [UInt8], severity: LogSeverity, body: String, capacity: Int = 320) {
        self.init(severity: severity, capacity: capacity) { $0 += timestamp }
        bodyText(body)
        closeBody()
    }

    /// The same with `Body` from bytes (bytes that are not UTF-8 become U+FFFD).
    public init(timestamp: [UInt8], severity: LogSeverity, body: [UInt8], capacity: Int = 320) {
        self.init(severity: severity, capacity: capacity) { $0 += timestamp }
        JSONText.appendContent(body, to: &bytes)
        closeBody()
    }

    /// Starts the line and leaves `Body` open for the `body…` calls, then `closeBody()`; `time` appends the
    /// timestamp.
    init(severity: LogSeverity, capacity: Int, time: (inout [UInt8]) -> Void) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes += Self.timestampKey
        time(&bytes)
        switch severity {
        case .info: bytes += Self.info
        case .warn: bytes += Self.warn
        case .error: bytes += Self.error
        }
        bytes += Self.bodyKey
    }

    mutating func bodyText(_ text: String) {
        var text = text
        text.withUTF8 { JSONText.appendContent($0, to: &bytes) }
    }

    /// A URL part in the body; `plain` when `JSONText.isPlainURL` said so (it is then copied as it is).
    mutating func bodyURL(_ part: ArraySlice<UInt8>, plain: Bool) {
        if plain { bytes += part } else { JSONText.appendURLContent(part, to: &bytes) }
    }
    mutating func bodyByte(_ byte: UInt8) { bytes.append(byte) }
    mutating func bodyDecimal(_ value: Int) { Self.appendDecimal(value, to: &bytes) }
    mutating func closeBody() { bytes.append(0x22) }

    /// A string attribute.
    public mutating func attribute(_ key: StaticString, _ value: String) {
        var value = value
        open(key)
        bytes.append(0x22)
        value.withUTF8 { JSONText.appendContent($0, to: &bytes) }
        bytes.append(0x22)
    }

    /// A string attribute from bytes (escaped; bytes that are not UTF-8 become U+FFFD).
    public mutating func attribute(_ key: StaticString, bytes value: ArraySlice<UInt8>) {
        open(key)
        bytes.append(0x22)
        JSONText.appendContent(value, to: &bytes)
        bytes.append(0x22)
    }

    /// A URL part (`url.path`, `url.query`): bytes outside printable ASCII percent-encoded, as in a URL.
    public mutating func attribute(_ key: StaticString, url value: ArraySlice<UInt8>) {
        open(key)
        bytes.append(0x22)
        JSONText.appendURLContent(value, to: &bytes)
        bytes.append(0x22)
    }

    /// An attribute key written once: `"name":`, for the lines built once per request.
    struct Key: Sendable {
        let quoted: [UInt8]
        init(_ name: StaticString) { quoted = [0x22] + name.withUTF8Buffer { Array($0) } + [0x22, 0x3a] }
    }

    mutating func attribute(_ key: Key, _ value: String) {
        var value = value
        open(key)
        bytes.append(0x22)
        value.withUTF8 { JSONText.appendContent($0, to: &bytes) }
        bytes.append(0x22)
    }

    mutating func attribute(_ key: Key, bytes value: ArraySlice<UInt8>) {
        open(key)
        bytes.append(0x22)
        JSONText.appendContent(value, to: &bytes)
        bytes.append(0x22)
    }

    mutating func attribute(_ key: Key, url value: ArraySlice<UInt8>, plain: Bool? = nil) {
        open(key)
        bytes.append(0x22)
        if plain ?? JSONText.isPlainURL(value) { bytes += value } else { JSONText.appendURLContent(value, to: &bytes) }
        bytes.append(0x22)
    }

    mutating func attribute(_ key: Key, _ value: Int) {
        open(key)
        Self.appendDecimal(value, to: &bytes)
    }

    mutating func attribute(_ key: Key, secondsFromNanoseconds nanoseconds: UInt64) {
        open(key)
        appendSeconds(nanoseconds)
    }

    mutating func attribute(_ key: Key, _ value: Bool) {
        open(key)
        bytes += value ? Self.trueText : Self.falseText
    }

    private mutating func open(_ key: Key) {
        if attributes {
            bytes.append(0x2c)
        } else {
            bytes += Self.attributesKey
            attributes = true
        }
        bytes += key.quoted
    }

    /// A whole-number attribute.
    public mutating func attribute(_ key: StaticString, _ value: Int) {
        open(key)
        Self.appendDecimal(value, to: &bytes)
    }

    /// A duration in seconds with six decimals (`0.000412`), from nanoseconds.
    public mutating func attribute(_ key: StaticString, secondsFromNanoseconds nanoseconds: UInt64) {
        open(key)
        appendSeconds(nanoseconds)
    }

    private mutating func appendSeconds(_ nanoseconds: UInt64) {
        let micros = nanoseconds / 1000
        Self.appendDecimal(Int(clamping: micros / 1_000_000), to: &bytes)
        bytes.append(0x2e)
        var fraction = Int(micros % 1_000_000)
        var divisor = 100_000
        while divisor > 0 {
            bytes.append(0x30 + UInt8(fraction / divisor))
            fraction %= divisor
            divisor /= 10
        }
    }

    /// A true/false attribute.
    public mutating func attribute(_ key: StaticString, _ value: Bool) {
        open(key)
        bytes += value ? Self.trueText : Self.falseText
    }

    /// The line, `Resource` last, with its newline.
    public consuming func finished(_ resource: LogResource) -> [UInt8] {
        if attributes { bytes.append(0x7d) }
        bytes.append(0x2c)
        bytes += resource.member
        bytes.append(0x7d)
        bytes.append(0x0a)
        return bytes
    }

    /// `,"Attributes":{"key":` or `,"key":`.
    private mutating func open(_ key: StaticString) {
        if attributes {
            bytes.append(0x2c)
        } else {
            bytes += Self.attributesKey
            attributes = true
        }
        bytes.append(0x22)
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(0x22)
        bytes.append(0x3a)
    }

    static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(0x2d) }
        appendDecimal(value.magnitude, to: &bytes)
    }

    private static func appendDecimal(_ value: UInt, to bytes: inout [UInt8]) {
        if value >= 10 { appendDecimal(value / 10, to: &bytes) }
        bytes.append(0x30 + UInt8(value % 10))
    }

    private static let timestampKey = Array(#"{"Timestamp":""#.utf8)
    private static let info = Array(#"","SeverityText":"INFO","SeverityNumber":9"#.utf8)
    private static let warn = Array(#"","SeverityText":"WARN","SeverityNumber":13"#.utf8)
    private static let error = Array(#"","SeverityText":"ERROR","SeverityNumber":17"#.utf8)
    private static let bodyKey = Array(#","Body":""#.utf8)
    private static let attributesKey = Array(#","Attributes":{"#.utf8)
    private static let trueText = Array("true".utf8)
    private static let falseText = Array("false".utf8)
}
