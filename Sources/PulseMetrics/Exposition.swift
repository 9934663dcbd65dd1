/// The Prometheus text exposition format, version 0.0.4, written as bytes:
///
///     # HELP pulse_http_requests_total HTTP requests answered, by route and status class.
///     # TYPE pulse_http_requests_total counter
///     pulse_http_requests_total{route="keys",status="2xx"} 1027
///
/// Help text escapes `\` and line feed; label values escape `\`, `"` and line feed. Values are written
/// as integers when they are whole, else in the shortest form that reads back as the same `Double`
/// (`0.005`, `1e-05`), and `+Inf`, `-Inf`, `NaN`.
struct Exposition {
    private(set) var bytes: [UInt8] = []

    /// The `Content-Type` of a scrape's answer.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    enum Kind: String {
        case counter, gauge, histogram
    }

    /// `# HELP` and `# TYPE` of a metric.
    mutating func header(_ name: String, help: String, kind: Kind) {
        bytes += "# HELP ".utf8
        bytes += name.utf8
        bytes.append(0x20)
        for byte in help.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): bytes += [0x5C, 0x5C]
            case 0x0A: bytes += [0x5C, UInt8(ascii: "n")]
            default: bytes.append(byte)
            }
        }
        bytes += "\n# TYPE ".utf8
        bytes += name.utf8
        bytes.append(0x20)
        bytes += kind.rawValue.utf8
        bytes.append(0x0A)
    }

    /// One sample line: `name{labels,extra} value`.
    mutating func sample(_ name: String, suffix: String = "", labels: [UInt8], extra: [UInt8] = [], value: Value) {
        bytes += name.utf8
        bytes += suffix.utf8
        if !labels.isEmpty || !extra.isEmpty {
            bytes.append(UInt8(ascii: "{"))
            bytes += labels
            if !labels.isEmpty && !extra.isEmpty { bytes.append(UInt8(ascii: ",")) }
            bytes += extra
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(0x20)
        switch value {
        case let .integer(count): bytes += String(count).utf8
        case let .signed(count): bytes += String(count).utf8
        case let .double(number): bytes += Self.format(number).utf8
        }
        bytes.append(0x0A)
    }

    enum Value {
        case integer(UInt64)
        case signed(Int64)
        case double(Double)
    }

    /// `a="x",b="y"` for `names` and `values`, values escaped.
    static func labelText(names: [String], values: [String]) -> [UInt8] {
        var text: [UInt8] = []
        for (position, (name, value)) in zip(names, values).enumerated() {
            if position > 0 { text.append(UInt8(ascii: ",")) }
            text += name.utf8
            text += [UInt8(ascii: "="), UInt8(ascii: "\"")]
            for byte in value.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): text += [0x5C, 0x5C]
                case UInt8(ascii: "\""): text += [0x5C, UInt8(ascii: "\"")]
                case 0x0A: text += [0x5C, UInt8(ascii: "n")]
                default: text.append(byte)
                }
            }
            text.append(UInt8(ascii: "\""))
        }
        return text
    }

    /// A sample value or a bucket bound as Prometheus reads it.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        // Whole numbers (counts, bytes) in full: every whole Double below 2⁶³ is an Int64 exactly.
        if value == value.rounded(), abs(value) < 0x1p63 { return String(Int64(value)) }
        return value.description
    }
}
