import PulseHTTPServer
import PulseMetrics
import Synchronization

/// What both servers' metrics share: the names of the request families, and the public listener's
/// connection gauges.
public enum HTTPFamilies {
    public static let requestsName = "pulse_http_requests_total"
    public static let requestsHelp = "HTTP requests answered, by route template and status class (also those the server refused itself)."
    public static let durationName = "pulse_http_request_duration_seconds"
    public static let durationHelp = "Time from the request line to the end of sending the answer, by route template (an event stream: its whole life)."

    /// `pulse_http_open_connections` and `pulse_http_connections_refused_total` of `server`, read when scraped.
    public static func registerConnections(of server: HTTPServer, in registry: MetricsRegistry) {
        registry.gauge("pulse_http_open_connections", help: "Connections open now on the public listener (event streams included).") {
            Double(server.openConnections)
        }
        registry.counter(
            "pulse_http_connections_refused_total",
            help: "Connections refused at --max-connections or --max-connections-per-ip (their request answered 503)."
        ) { Double(server.connectionsCut.refused) }
    }
}
