import Foundation
import PulseCore

/// Where the CLI writes: standard output for data (codes, tokens, lists, JSON), standard error for
/// notes and errors; and the environment it reads (`PULSE_DATABASE_URL`). Tests pass closures that
/// capture both outputs, and an environment of their own.
public struct Console: Sendable {
    public var out: @Sendable (String) -> Void
    public var err: @Sendable (String) -> Void
    public var environment: [String: String]

    public init(
        out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.out = out
        self.err = err
        self.environment = environment
    }

    /// Writes `value` as pretty JSON on standard output (one document, no trailing blank line).
    func out(json value: JSONValue) {
        out(String(decoding: value.prettyBytes.dropLast(), as: UTF8.self))
    }

    /// A list command's output: a JSON array with `--json`, else a line for each item.
    func list<Item>(_ items: [Item], asJSON: Bool, json: (Item) -> JSONValue, line: (Item) -> String) {
        if asJSON {
            out(json: .array(items.map(json)))
        } else {
            for item in items { out(line(item)) }
        }
    }

    public static let standard = Console(
        out: { print($0) },
        err: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
}

/// Times as operators read them: UTC, ISO 8601, seconds (`2026-12-01T14:00:00Z`).
enum TimeText {
    /// Written by hand (`Timestamp`), not by an `ISO8601DateFormatter` made per call: the report and the live
    /// view write two a row, and making a formatter cost about 0.1 ms each (a report of 300 devices took 60 ms).
    static func iso(_ seconds: Int64) -> String {
        Timestamp.string(Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
