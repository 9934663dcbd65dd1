import Foundation
import PulseHTTPServer
import Synchronization

/// One line per request, written with a single write(2) (so lines from threads never interleave):
///
///     2026-11-29T17:20:01Z 127.0.0.1 GET /api/sync/asset/3f…9a 200 204800 0.412ms memory
///
/// Fields: time (UTC), client, method, target (bytes outside printable ASCII as \xHH), status (0 when
/// libmicrohttpd refused the request itself), body bytes, duration from request line to the end of sending,
/// and the outcome (`memory`, `disk`, `verified`, `miss`, `corrupt`, … with `,aborted` if the client left).
public final class AccessLog: Sendable {
    private let handle: FileHandle
    private let clock = Mutex<(second: Int, text: String)>((0, ""))

    /// Logs to standard output.
    public static func standardOutput() -> AccessLog { AccessLog(descriptor: 1, owns: false) }

    /// Appends to the file at `path` (created 0644 if missing).
    public static func file(_ path: String) throws -> AccessLog {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw OriginError("cannot open access log \(path): \(String(cString: strerror(errno)))")
        }
        return AccessLog(descriptor: fd, owns: true)
    }

    private init(descriptor: Int32, owns: Bool) {
        handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: owns)
    }

    /// Writes the line for `exchange`.
    public func record(_ exchange: HTTPExchange) {
        var line: [UInt8] = []
        line.reserveCapacity(160 + exchange.target.count)
        line += timestamp().utf8
        line.append(0x20)
        line += exchange.client.utf8
        line.append(0x20)
        line += (exchange.method.isEmpty ? "-" : exchange.method).utf8
        line.append(0x20)
        Self.appendEscaped(exchange.target, to: &line)
        let micros = exchange.durationNanoseconds / 1000
        let duration = "\(micros / 1000).\(String(repeating: "0", count: 3 - String(micros % 1000).count))\(micros % 1000)ms"
        let note = exchange.completed ? exchange.note : exchange.note + ",aborted"
        line += " \(exchange.status) \(exchange.bodyBytes) \(duration) \(note)\n".utf8
        try? handle.write(contentsOf: line)
    }

    private static func appendEscaped(_ bytes: [UInt8], to line: inout [UInt8]) {
        if bytes.isEmpty { line.append(0x2d); return }
        let digits = Array("0123456789abcdef".utf8)
        for byte in bytes {
            if byte > 0x20 && byte < 0x7f && byte != 0x5c {
                line.append(byte)
            } else {
                line += [0x5c, 0x78, digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]]
            }
        }
    }

    /// `2026-11-29T17:20:01Z`, formatted once per second.
    private func timestamp() -> String {
        var now = time(nil)
        let second = Int(now)
        if let cached = clock.withLock({ $0.second == second ? $0.text : nil }) { return cached }
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let text = "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
        clock.withLock { $0 = (second, text) }
        return text
    }
}
