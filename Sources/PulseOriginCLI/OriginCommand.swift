import Foundation
import PulseCommandLine
import PulseCore
import PulseHTTPServer
import PulseMetrics
import PulseObservability
import PulseLog
import PulseOrigin
import PulseSystem

/// `pulse-origin`: the command line, declared once (parsing, help, validation, run).
public enum OriginCommand {
    public static let command = Command(
        name: "pulse-origin",
        abstract: "Serve a pulse package's blobs and app configs to a CDN or shared cache, with immutable caching.",
        discussion: """
            Routes: GET/HEAD /api/sync/asset/<sha256>, /api/sync/appconfig?org=<slug>, /healthz, /livez, /readyz.
            Every blob is hashed before it is first served; a blob whose bytes do not match its name gets a 500,
            never a 200. Stops gracefully on SIGTERM, SIGINT or SIGQUIT: /readyz answers 503 at once, serving goes on
            for --drain-delay seconds (a second signal cuts it short), then the listener closes and responses in
            flight finish. SIGHUP reads index.json again; SIGUSR1 reopens the access log file. See docs/origin.md.
            """,
        examples: [
            "pulse-origin --package pkg                                  # serves pkg/public on 127.0.0.1:8080",
            "pulse-origin --package /srv/cdn/pulse --listen :8080         # a pushed folder, on every address",
            "pulse-origin --package pkg --listen 127.0.0.1:0 --access-log off   # a free port, printed at start",
            "pulse-origin --package pkg --memory-cache 1GB --max-connections-per-ip 0   # behind a CDN",
            "pulse-origin --package pkg --metrics-listen 127.0.0.1:9464   # Prometheus scrapes GET /metrics there",
            "pulse-origin --package pkg --log-format json                # access log and events as JSON lines",
        ],
        options: [
            package, listen, accessLog, logFormat, allowOrigin, threads, maxConnections, maxConnectionsPerIP, idleTimeout, headerTimeout,
            connectionMemory, memoryCache, memoryMaxBlob, maxBlobSize, recheck, appconfigMaxAge, drainDelay, shutdownTimeout,
            metricsListen,
        ],
        validate: { arguments in _ = try settings(arguments) },
        run: { arguments in try run(arguments) }
    )

    static let package = Option.value(
        "package", "<dir>", help: "A package folder (its public/ part is served) or a folder pulse-pack push wrote (required).").required()
    static let listen = Option.value("listen", "<host:port>", help: "Address to listen on (default 127.0.0.1:8080; port 0 picks a free port).")
    static let accessLog = Option.value("access-log", "<path>", help: "Access log file, '-' for standard output (default), 'off' for none.")
    static let logFormat = Option.value(
        "log-format", "<text|json>", help: "The access log's and standard error's lines: text (default) or json (one OpenTelemetry-named object per line).",
        mustBe: LogFormat.allowed, parse: { LogFormat(rawValue: $0) })
    static let allowOrigin = Option.value(
        "allow-origin", "<origin>", help: "Access-Control-Allow-Origin value (default *), 'off' for no CORS headers.")
    static let threads = Option.int("threads", "<n>", in: 1...256, help: "Server threads, each with an epoll loop (default: one per core).")
    static let maxConnections = Option.int(
        "max-connections", "<n>", in: 1...1_000_000,
        help: "Open connections at most (default 1024); one over it is answered 503 with Retry-After: 1 and Connection: close.")
    static let maxConnectionsPerIP = Option.int(
        "max-connections-per-ip", "<n>", in: 0...1_000_000,
        help: "Open connections per client IP at most, 0 for no limit (default 64); one over it is answered 503 with "
            + "Retry-After: 1 and Connection: close.")
    static let idleTimeout = Option.int("idle-timeout", "<seconds>", in: 1...86_400, help: "Close a connection silent this long: idle or too slow (default 15).")
    static let headerTimeout = Option.int(
        "header-timeout", "<seconds>", in: 1...3600, help: "A request's line and headers must arrive within this long in all (default 10).")
    static let connectionMemory = size(
        "connection-memory", help: "Memory per connection for request and response headers (default 8KiB: request headers up to about 7 kB).",
        in: 4096...(1 << 20), outside: "--connection-memory must be 4KiB to 1MiB")
    static let memoryCache = size("memory-cache", help: "Verified blobs kept in memory at most, e.g. 1GB (default 256MiB; 0 disables).")
    static let memoryMaxBlob = size("memory-max-blob", help: "Larger blobs are always sent from disk (default 8MiB).")
    static let maxBlobSize = size("max-blob-size", help: "Larger blobs are corrupt (500) without being read (default 256MiB).")
    static let recheck = Option.int("recheck", "<seconds>", in: 0...3600, help: "Look at a known blob's file again after this long (default 1).")
    static let appconfigMaxAge = Option.int(
        "appconfig-max-age", "<seconds>", in: 0...31_536_000, help: "Cache-Control max-age of app configs (default 60).")
    static let drainDelay = Option.int(
        "drain-delay", "<seconds>", in: 0...3600,
        help: "On SIGTERM, answer /readyz with 503 and keep serving this long before closing the listener (default 0).")
    static let metricsListen = Option.value(
        "metrics-listen", "<host:port>",
        help: "Serve Prometheus metrics at GET /metrics on this separate address, e.g. 127.0.0.1:9464 (default: off; never the public port)."
    ) { text in
        if let problem = MetricsListener.checkAddress(text) { throw UsageError(problem) }
        return text
    }
    static let shutdownTimeout = Option.int(
        "shutdown-timeout", "<seconds>", in: 0...3600, help: "On SIGTERM, wait this long for responses in flight (default 10).")

    /// A size as every tool reads it (`ByteCount.parse`): `512K`, `256MB`, `1G` (SI), `256MiB` (powers of 1024), up to 1 TiB.
    static func size(
        _ name: String, help: String, in range: ClosedRange<Int> = 0...(1 << 40), outside: String? = nil
    ) -> OptionHandle<Int?> {
        Option.value(name, "<size>", help: help) { text in
            guard let bytes = ByteCount.parse(text), bytes <= 1 << 40 else {
                throw UsageError("--\(name) must be a size like 512K, 256MB or 1GiB, got \"\(text)\"")
            }
            guard range.contains(bytes) else { throw UsageError(outside ?? "--\(name) must be \(range.lowerBound) to \(range.upperBound) bytes") }
            return bytes
        }
    }

    /// Runs the command with `arguments` (without the program name); returns the exit code.
    public static func main(_ arguments: [String]) -> Int32 {
        CommandLineTool.main(command, arguments: arguments, errorHandler: { error in
            FileHandle.standardError.write(Data("pulse-origin: error: \(error)\n".utf8))
            return ExitCode.failure
        }, printError: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
    }

    /// Validated settings from the arguments.
    static func settings(_ arguments: Arguments) throws -> (OriginConfiguration, HTTPServer.Configuration, accessLog: String, drainDelay: Double, drain: Double) {
        var origin = OriginConfiguration(packageRoot: URL(fileURLWithPath: arguments[Self.package]))
        var server = HTTPServer.Configuration()
        server.requestHeaders = Origin.requestHeaders
        if let listen = arguments[Self.listen] { server.listen = listen }
        if let value = arguments[Self.allowOrigin] { origin.allowOrigin = value == "off" ? nil : value }
        if let value = arguments[Self.threads] { server.threads = value }
        if let value = arguments[Self.maxConnections] { server.maxConnections = value }
        if let value = arguments[Self.maxConnectionsPerIP] { server.maxConnectionsPerIP = value }
        if let value = arguments[Self.idleTimeout] { server.idleTimeoutSeconds = value }
        if let value = arguments[Self.headerTimeout] { server.headerTimeoutSeconds = value }
        if let value = arguments[Self.connectionMemory] { server.connectionMemoryBytes = value }
        if let value = arguments[Self.memoryCache] { origin.memoryBudget = value }
        if let value = arguments[Self.memoryMaxBlob] { origin.memoryMaxBlob = value }
        if let value = arguments[Self.maxBlobSize] { origin.maxBlobBytes = value }
        if let value = arguments[Self.recheck] { origin.recheckSeconds = Double(value) }
        if let value = arguments[Self.appconfigMaxAge] { origin.appconfigMaxAge = value }
        let drain = Double(arguments[Self.shutdownTimeout] ?? 10)
        return (origin, server, arguments[Self.accessLog] ?? "-", Double(arguments[Self.drainDelay] ?? 0), drain)
    }

    static func run(_ arguments: Arguments) throws -> Int32 {
        let (originConfiguration, serverConfiguration, logPath, drainDelay, drain) = try settings(arguments)
        let logFormat = arguments[Self.logFormat] ?? .text
        let events = EventLog(service: "pulse-origin", version: ToolVersion.current, format: logFormat)
        do {
            return try serve(
                originConfiguration, serverConfiguration, logPath: logPath, drainDelay: drainDelay, drain: drain,
                metricsAddress: arguments[Self.metricsListen], maxConnectionsGiven: arguments[Self.maxConnections] != nil, events: events)
        } catch let error where logFormat == .json && !(error is UsageError) {
            // As text, the error handler of `main` writes the error line; as JSON, it is one more event.
            events.error("\(error)")
            return ExitCode.failure
        }
    }

    private static func serve(
        _ originConfiguration: OriginConfiguration, _ serverConfiguration: HTTPServer.Configuration, logPath: String, drainDelay: Double,
        drain: Double, metricsAddress: String?, maxConnectionsGiven: Bool, events: EventLog
    ) throws -> Int32 {
        // Before any thread exists (the server's, the verifiers'), so that all of them inherit the mask and the
        // signals reach only the loop below.
        ServerSignals.block()
        let descriptors = try checkDescriptors(serverConfiguration, metrics: metricsAddress != nil)
        var serverConfiguration = serverConfiguration
        let requestedConnections = serverConfiguration.maxConnections
        serverConfiguration.maxConnections = try descriptors.fit(maxConnections: requestedConnections, given: maxConnectionsGiven)
        let resource = LogResource(serviceName: "pulse-origin", serviceVersion: ToolVersion.current)
        let accessLog: AccessLog? = switch logPath {
        case "off": nil
        case "-": .standardOutput(format: events.format, resource: resource, route: OriginRoute.template)
        default: try .file(logPath, format: events.format, resource: resource, route: OriginRoute.template)
        }
        let origin = try Origin(configuration: originConfiguration, accessLog: accessLog, alarm: events.alarm)
        // Metrics only with --metrics-listen: without it the responder is the origin itself, as before.
        let metrics = metricsAddress.map { _ in OriginMetrics(origin: origin, version: ToolVersion.current) }
        var metricsListener: MetricsListener?
        if let metrics, let metricsAddress {
            do throws(HTTPServerError) { metricsListener = try MetricsListener(listen: metricsAddress, registry: metrics.registry) } catch {
                throw OriginError("--metrics-listen: \(error)")
            }
        }
        let responder: any HTTPResponder = metrics.map { MeteredResponder(origin, meter: $0) } ?? origin
        let server = try HTTPServer(configuration: serverConfiguration, responder: responder)
        metrics?.watch(server)
        events.info("serving \(originConfiguration.packageRoot.path) on http://\(server.boundAddress) "
            + "(\(serverConfiguration.threads) threads, \(descriptors.summary(maxConnections: serverConfiguration.maxConnections, lowered: requestedConnections)), pid \(SystemProcess.currentID))")
        if let metricsListener { events.info("metrics on http://\(metricsListener.boundAddress)/metrics") }
        let serviceManager = ServiceManager.current
        serviceManager.ready(status: "serving \(originConfiguration.packageRoot.path) on http://\(server.boundAddress)")
        while true {
            let signal = ServerSignals.wait()
            let name = ServerSignals.name(signal)
            switch signal {
            case SIGHUP:
                serviceManager.reloading()
                let note = origin.reloadIndex()
                events.info("\(name): \(note)", ["pulse.signal": name])
                serviceManager.ready(status: "serving on http://\(server.boundAddress); \(name): \(note)")
            case SIGUSR1:
                events.info("\(name): \(accessLog?.reopen() ?? "no access log to reopen")", ["pulse.signal": name])
            case _ where ServerSignals.isTermination(signal):
                // Not ready before systemd hears STOPPING: whoever watches both sees /readyz 503 by then.
                origin.readiness.beginDraining()
                serviceManager.stopping(status: "\(name): draining, then stopping")
                origin.readiness.drain(for: drainDelay) { events.info("\(name): \($0)", ["pulse.signal": name]) }
                events.info("\(name): finishing \(server.requestsInFlight) responses in flight, then stopping", ["pulse.signal": name])
                stopWithin(seconds: drain + 5, events: events)
                server.shutdown(drainSeconds: drain)
                metricsListener?.stop()
                events.info("stopped")
                return ExitCode.success
            default:
                events.info("\(name): ignored", ["pulse.signal": name])
            }
        }
    }

    /// Raises the open-files limit to the hard one: the budget `--max-connections` is fitted to. The reserve:
    /// `DescriptorBudget.baseReserve` and the metrics listener's connections. A blob sent from disk holds
    /// one more descriptor while it is sent; if none is left, that request is answered as when the file is gone.
    static func checkDescriptors(_ server: HTTPServer.Configuration, metrics: Bool) throws(HTTPServerError) -> HTTPServer.DescriptorBudget {
        let metricsDescriptors = metrics ? HTTPServer.DescriptorBudget.needed(maxConnections: MetricsListener.maxConnections, threads: MetricsListener.threads) : 0
        let reserve = HTTPServer.DescriptorBudget.baseReserve + metricsDescriptors
        let budget = HTTPServer.DescriptorBudget.raised(reserve: reserve, threads: server.threads)
            ?? HTTPServer.DescriptorBudget(limit: Int.max, reserve: reserve, threads: server.threads)
        return budget
    }

    /// A last resort: if the server has not stopped `seconds` after the stop began (a thread stuck in a system
    /// call), say so and exit anyway, so a stop request is never ignored.
    private static func stopWithin(seconds: Double, events: EventLog) {
        let watchdog = Thread {
            Thread.sleep(forTimeInterval: seconds)
            events.error("still not stopped \(Int(seconds)) s after the signal; exiting now")
            SystemProcess.exitImmediately(1)
        }
        watchdog.start()
    }
}
