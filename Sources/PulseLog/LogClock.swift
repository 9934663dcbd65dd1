import Foundation
import PulseCore
import Synchronization

/// The `Timestamp` of a JSON line: RFC 3339 in UTC with microseconds (`2026-12-03T10:52:46.123456Z`). The part
/// up to the second is formatted once per second; the rest is six digits.
public final class LogClock: Sendable {
    private let cache = Mutex<(second: Int, text: [UInt8])>((-1, []))

    public init() {}

    /// Now.
    public func now() -> [UInt8] { text(unixMicroseconds: Int((Date().timeIntervalSince1970 * 1e6).rounded(.down))) }

    /// The instant `unixMicroseconds` after 1970-01-01T00:00:00Z (0 for any instant before it).
    public func text(unixMicroseconds: Int) -> [UInt8] {
        let micros = max(0, unixMicroseconds)
        let second = micros / 1_000_000
        var text: [UInt8]
        if let cached = cache.withLock({ $0.second == second ? $0.text : nil }) {
            text = cached
        } else {
            text = Array(Timestamp.string(Date(timeIntervalSince1970: Double(second))).utf8.dropLast())  // without its Z
            let fresh = text
            cache.withLock { $0 = (second, fresh) }
        }
        text.reserveCapacity(text.count + 8)
        text.append(0x2e)
        var fraction = micros % 1_000_000
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0)
        digits.5 = UInt8(fraction % 10); fraction /= 10
        digits.4 = UInt8(fraction % 10); fraction /= 10
        digits.3 = UInt8(fraction % 10); fraction /= 10
        digits.2 = UInt8(fraction % 10); fraction /= 10
        digits.1 = UInt8(fraction % 10); fraction /= 10
        digits.0 = UInt8(fraction % 10)
        text.append(0x30 + digits.0)
        text.append(0x30 + digits.1)
        text.append(0x30 + digits.2)
        text.append(0x30 + digits.3)
        text.append(0x30 + digits.4)
        text.append(0x30 + digits.5)
        text.append(0x5a)
        return text
    }
}
