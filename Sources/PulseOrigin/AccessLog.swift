import Foundation
import PulseCore
import PulseHTTPServer
import PulseLog
import PulseSystem
import Synchronization

/// One line per request, written with a single write(2) (so lines from threads never interleave), in the
/// format of `--log-format` (`AccessRecord` builds both):
///
///     2026-11-29T17:20:01Z 127.0.0.1 GET /api/sync/asset/3f…9a 200 204800 0.412ms memory
///
/// Fields: time (UTC), client, method and target (bytes outside printable ASCII as \xHH, so nothing a client
/// sends can move the cursor or fake a field on a terminal), status (0 when
/// libmicrohttpd refused the request itself), body bytes, duration from request line to the end of sending,
/// and the outcome (`memory`, `disk`, `verified`, `miss`, `corrupt`, … with `,aborted` if the client left).
/// With `.json`, the same as one OpenTelemetry-named JSON object per line.
public final class AccessLog: Sendable {
    private let file: File
    /// The file's path, to reopen it after log rotation (nil for standard output).
    private let path: String?
    private let format: LogFormat
    private let resource: LogResource
    private let clock = Mutex<(second: Int, text: [UInt8])>((0, []))
    private let jsonClock = LogClock()

    /// Logs to standard output.
    /// - Parameters:
    ///   - format: text (the default) or JSON lines.
    ///   - resource: who writes the JSON lines (`service.name`, `service.version`).
    public static func standardOutput(format: LogFormat = .text, resource: LogResource = .unnamed) -> AccessLog {
        AccessLog(file: .standardOutput, format: format, resource: resource)
    }

    /// Appends to the file at `path` (created 0644 if missing).
    public static func file(_ path: String, format: LogFormat = .text, resource: LogResource = .unnamed) throws -> AccessLog {
        do throws(PathError) {
            return AccessLog(file: try File.openForAppending(path, creatingWith: 0o644), path: path, format: format, resource: resource)
        } catch {
            throw OriginError("cannot open access log \(path): \(error.errno)")
        }
    }

    private init(file: File, path: String? = nil, format: LogFormat, resource: LogResource) {
        self.file = file
        self.path = path
        self.format = format
        self.resource = resource
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
        let record = AccessRecord(
            client: exchange.client, method: exchange.method, target: exchange.target, status: exchange.status, bodyBytes: exchange.bodyBytes,
            durationNanoseconds: exchange.durationNanoseconds, note: exchange.note, completed: exchange.completed)
        switch format {
        case .text: try? file.write(record.text(time: timestamp()))
        case .json: try? file.write(record.json(clock: jsonClock, resource: resource))
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
