import Foundation
import PulseCore
import PulseHTTPServer
import PulseLog
import PulseSystem
import Synchronization

/// One line per request, written with a single write(2) (so lines from threads never interleave):
///
///     2026-11-29T17:20:01Z 127.0.0.1 GET /api/sync/asset/3f…9a 200 204800 0.412ms memory
///
/// Fields: time (UTC), client, method and target (bytes outside printable ASCII as \xHH, so nothing a client
/// sends can move the cursor or fake a field on a terminal), status (0 when
/// libmicrohttpd refused the request itself), body bytes, duration from request line to the end of sending,
/// and the outcome (`memory`, `disk`, `verified`, `miss`, `corrupt`, … with `,aborted` if the client left).
/// Built from bytes, without `String` formatting: it runs once per request. With `--log-format json`, the same
/// request as one OpenTelemetry-named JSON object per line instead (`AccessRecord`, PulseLog).
public final class AccessLog: Sendable {
    private let file: File
    /// The file's path, to reopen it after log rotation (nil for standard output).
    private let path: String?
    private let clock = Mutex<(second: Int, text: [UInt8])>((0, []))
    /// Where JSON lines come from (`service.name`, `service.version`); nil: text lines.
    private let json: (resource: LogResource, clock: LogClock, route: RouteTemplate?)?

    /// A request target's route template for JSON lines (`http.route`): the same names the metrics use.
    public typealias RouteTemplate = @Sendable ([UInt8]) -> String

    /// Logs to standard output.
    /// - Parameters:
    ///   - format: text (the default) or JSON lines.
    ///   - resource: who writes the JSON lines (`service.name`, `service.version`).
    ///   - route: names each target's route in JSON lines (`http.route`); nil: no such attribute.
    public static func standardOutput(format: LogFormat = .text, resource: LogResource = .unnamed, route: RouteTemplate? = nil) -> AccessLog {
        AccessLog(file: .standardOutput, format: format, resource: resource, route: route)
    }

    /// Appends to the file at `path` (created 0644 if missing).
    public static func file(
        _ path: String, format: LogFormat = .text, resource: LogResource = .unnamed, route: RouteTemplate? = nil
    ) throws -> AccessLog {
        do throws(PathError) {
            return AccessLog(
                file: try File.openForAppending(path, creatingWith: 0o644), path: path, format: format, resource: resource, route: route)
        } catch {
            throw OriginError("cannot open access log \(path): \(error.errno)")
        }
    }

    private init(file: File, path: String? = nil, format: LogFormat, resource: LogResource, route: RouteTemplate?) {
        self.file = file
        self.path = path
        json = format == .json ? (resource, LogClock(), route) : nil
    }

    /// Opens the log file's path again (SIGUSR1, after logrotate moved the file away) and writes there from
    /// now on: the new file takes the old descriptor's number (dup2), so writers need no lock. Returns a line
    /// for the server log.
    public func reopen() -> String {
        guard let path else { return "access log is standard output; nothing to reopen" }
        let fresh: File
        do throws(PathError) { fresh = try File.openForAppending(path, creatingWith: 0o644) } catch {
            return "cannot reopen access log \(path): \(error.errno); still writing to the old file"
        }
        do throws(PathError) { try file.redirect(to: fresh) } catch { return "cannot reopen access log \(path): \(error.errno)" }
        return "access log \(path) reopened"
    }

    /// Writes the line for `exchange`.
    public func record(_ exchange: HTTPExchange) {
        if let json {
            let record = AccessRecord(exchange, route: json.route?(exchange.target))
            try? file.write(record.json(clock: json.clock, resource: json.resource))
            return
        }
        var line: [UInt8] = []
        line.reserveCapacity(200 + exchange.target.count)
        line += timestamp()
        line.append(0x20)
        line += exchange.client
        line.append(0x20)
        var method = exchange.method
        method.withUTF8 { Self.appendEscaped($0, to: &line) }
        line.append(0x20)
        Self.appendEscaped(exchange.target, to: &line)
        line.append(0x20)
        Self.appendDecimal(exchange.status, to: &line)
        line.append(0x20)
        Self.appendDecimal(exchange.bodyBytes, to: &line)
        line.append(0x20)
        let micros = Int(exchange.durationNanoseconds / 1000)
        Self.appendDecimal(micros / 1000, to: &line)
        line.append(0x2e)
        let fraction = micros % 1000
        if fraction < 100 { line.append(0x30) }
        if fraction < 10 { line.append(0x30) }
        Self.appendDecimal(fraction, to: &line)
        line += [0x6d, 0x73, 0x20]  // "ms "
        line += exchange.note.utf8
        if !exchange.completed { line += ",aborted".utf8 }
        line.append(0x0a)
        try? file.write(line)
    }

    private static func appendDecimal(_ value: Int, to line: inout [UInt8]) {
        if value < 0 { line.append(0x2d); appendDecimal(-value, to: &line); return }
        if value >= 10 { appendDecimal(value / 10, to: &line) }
        line.append(0x30 + UInt8(value % 10))
    }

    private static func appendEscaped<Bytes: Collection<UInt8>>(_ bytes: Bytes, to line: inout [UInt8]) {
        if bytes.isEmpty { line.append(0x2d); return }
        if !bytes.contains(where: { $0 <= 0x20 || $0 >= 0x7f || $0 == 0x5c }) {  // the usual case: copy as is
            line.append(contentsOf: bytes)
            return
        }
        let digits: StaticString = "0123456789abcdef"
        for byte in bytes {
            if byte > 0x20 && byte < 0x7f && byte != 0x5c {
                line.append(byte)
            } else {
                digits.withUTF8Buffer { hex in line += [0x5c, 0x78, hex[Int(byte >> 4)], hex[Int(byte & 0x0f)]] }
            }
        }
    }

    /// `2026-11-29T17:20:01Z`, formatted once per second.
    private func timestamp() -> [UInt8] {
        let second = Int(Date().timeIntervalSince1970.rounded(.down))
        if let cached = clock.withLock({ $0.second == second ? $0.text : nil }) { return cached }
        let bytes = Array(Timestamp.string(Date(timeIntervalSince1970: Double(second))).utf8)
        clock.withLock { $0 = (second, bytes) }
        return bytes
    }
}
