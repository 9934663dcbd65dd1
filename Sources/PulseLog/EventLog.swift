import Foundation

/// A server's event lines — the start line, signals, draining, reloads, alarms, errors — in the format of
/// `--log-format`. `text` writes exactly what the servers always wrote (`pulse-server: SIGHUP: …`, with
/// `error: ` before an error's message); `json` writes one `LogLine` per event with `Body` the message, and
/// the attributes given.
public final class EventLog: Sendable {
    public let format: LogFormat
    private let prefix: String
    private let resource: LogResource
    private let clock = LogClock()
    private let write: @Sendable (String) -> Void

    /// - Parameters:
    ///   - service: the program's name: the text lines' prefix (`pulse-server: `) and `service.name`.
    ///   - version: `service.version`.
    ///   - write: writes one line (without its newline); standard error by default.
    public init(
        service: String, version: String, format: LogFormat,
        write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    ) {
        self.format = format
        prefix = service + ": "
        resource = LogResource(serviceName: service, serviceVersion: version)
        self.write = write
    }

    /// Writes `message` at `severity`; `attributes` appear in JSON only (OpenTelemetry names or `pulse.*`).
    public func log(_ severity: LogSeverity, _ message: String, _ attributes: KeyValuePairs<StaticString, String> = [:]) {
        switch format {
        case .text:
            write(prefix + (severity == .error ? "error: " : "") + message)
        case .json:
            write(String(decoding: line(severity, message, attributes), as: UTF8.self))
        }
    }

    /// The JSON line of an event, without its newline.
    func line(_ severity: LogSeverity, _ message: String, _ attributes: KeyValuePairs<StaticString, String>) -> [UInt8] {
        var line = LogLine(timestamp: clock.now(), severity: severity, body: message)
        for (key, value) in attributes { line.attribute(key, value) }
        var bytes = line.finished(resource)
        bytes.removeLast()
        return bytes
    }

    public func info(_ message: String, _ attributes: KeyValuePairs<StaticString, String> = [:]) { log(.info, message, attributes) }
    public func warn(_ message: String, _ attributes: KeyValuePairs<StaticString, String> = [:]) { log(.warn, message, attributes) }
    public func error(_ message: String, _ attributes: KeyValuePairs<StaticString, String> = [:]) { log(.error, message, attributes) }

    /// Where the responders' alarms go (a corrupt blob, an unusable index, a storage failure behind a 500):
    /// `WARN` lines.
    public var alarm: @Sendable (String) -> Void { { [self] message in warn(message) } }
}
