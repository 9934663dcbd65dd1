/// How both servers write their log lines (`--log-format`): `text`, the lines they always wrote, or `json`,
/// one object per line in the OpenTelemetry log data model's names (`LogLine`).
public enum LogFormat: String, Sendable, CaseIterable {
    case text
    case json

    /// The values `--log-format` takes, for its help and its usage error: `text or json`.
    public static let allowed = allCases.map(\.rawValue).joined(separator: " or ")
}

/// A line's severity: OpenTelemetry's `SeverityText` and `SeverityNumber` (INFO 9, WARN 13, ERROR 17).
public enum LogSeverity: Sendable {
    case info
    case warn
    case error

    public var text: String {
        switch self {
        case .info: "INFO"
        case .warn: "WARN"
        case .error: "ERROR"
        }
    }

    public var number: Int {
        switch self {
        case .info: 9
        case .warn: 13
        case .error: 17
        }
    }
}
