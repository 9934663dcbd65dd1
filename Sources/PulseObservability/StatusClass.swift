import PulseMetrics

/// The `status` label: an answer's status class. `unknown` is an exchange libmicrohttpd answered on its own
/// (its status is not known to the server: a request line or headers too large, the connection cut first).
public enum StatusClass: Int, MetricLabel {
    public static let labelName = "status"
    case informational, success, redirection, clientError, serverError, unknown

    public static let values = ["1xx", "2xx", "3xx", "4xx", "5xx", "unknown"]
    public var labelValue: String { Self.values[rawValue] }
    @inlinable public var labelIndex: Int { rawValue }

    /// The class of `status` (100…599; anything else is `unknown`).
    @inlinable public init(status: Int) {
        switch status {
        case 200..<300: self = .success
        case 300..<400: self = .redirection
        case 400..<500: self = .clientError
        case 500..<600: self = .serverError
        case 100..<200: self = .informational
        default: self = .unknown
        }
    }
}
