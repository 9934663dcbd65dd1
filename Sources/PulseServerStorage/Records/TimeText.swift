import Foundation
import PulseCore

/// Times as operators read them: UTC, ISO 8601, seconds (`2026-12-01T14:00:00Z`), for the responders'
/// answers and the commands' listings.
public enum TimeText {
    /// Written by hand (`Timestamp`), not by an `ISO8601DateFormatter` made per call: the report and the live
    /// view write two a row, and making a formatter cost about 0.1 ms each (a report of 300 devices took 60 ms).
    public static func iso(_ seconds: Int64) -> String {
        Timestamp.string(Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    public static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
