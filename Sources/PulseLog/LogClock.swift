import Foundation
import PulseCore
import Synchronization

/// The `Timestamp` of a JSON line: RFC 3339 in UTC with microseconds (`2026-12-03T10:52:46.123456Z`). The part
/// up to the second is formatted once per second; the rest is six digits.
public final class LogClock: Sendable {
    private let cache = Mutex<(second: Int, text: [UInt8])>((-1, []))

    public init() {}

    /// Now.
    public func now() -> [UInt8] {
        var text: [UInt8] = []
        append(unixMicroseconds: Self.unixMicroseconds(), to: &text)
        return text
    }

    /// The instant `unixMicroseconds` after 1970-01-01T00:00:00Z (0 for any instant before it).
    public func text(unixMicroseconds: Int) -> [UInt8] {
        var text: [UInt8] = []
        append(unixMicroseconds: unixMicroseconds, to: &text)
        return text
    }

    /// Appends now to `bytes` (the access log's way: no array of its own).
    func appendNow(to bytes: inout [UInt8]) { append(unixMicroseconds: Self.unixMicroseconds(), to: &bytes) }

    static func unixMicroseconds() -> Int { Int((Date().timeIntervalSince1970 * 1e6).rounded(.down)) }

    func append(unixMicroseconds: Int, to bytes: inout [UInt8]) {
        let micros = max(0, unixMicroseconds)
        let second = micros / 1_000_000
        if let cached = cache.withLock({ $0.second == second ? $0.text : nil }) {
            bytes += cached
        } else {
            let text = Array(Timestamp.string(Date(timeIntervalSince1970: Double(second))).utf8.dropLast())  // without its Z
            cache.withLock { $0 = (second, text) }
            bytes += text
        }
        bytes.append(0x2e)
        var fraction = micros % 1_000_000
        var divisor = 100_000
        while divisor > 0 {
            bytes.append(0x30 + UInt8(fraction / divisor))
            fraction %= divisor
            divisor /= 10
        }
        bytes.append(0x5a)
    }
}
