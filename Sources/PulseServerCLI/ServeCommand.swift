import Foundation
import PulseCommandLine
import struct PulseConsole.ConsoleConfiguration
import PulseServer
import PulseHTTPServer
import PulseMetrics
import PulseObservability
import PulseServerMetrics
import PulseLog
import PulseOrigin
import PulseServerStorage
import PulseSyncAPI
import PulseSystem

/// `pulse-server serve --data DIR --listen HOST:PORT [--public PKG] [--trusted-proxy CIDR]…`
enum ServeCommand {
    static let listen = Option.value(
        "listen", "<host:port>", help: "Address to listen on (default 127.0.0.1:8080; :8080 for every interface; port 0 picks a free port).")
    static let publicPackage = Option.value("public", "<dir>", help: "A package (its public/ part) to serve assets and app configs from.")
    static let trustedProxy = Option.values(
        "trusted-proxy", "<cidr>", help: "A proxy whose X-Forwarded-For is believed, e.g. 10.0.0.5 or 10.0.0.0/24; may be repeated."
    ) { text in try IPNetwork(parsing: text) }
    static let publicURL = Option.value(
        "public-url", "<url>", help: "The address browsers and phones reach this server at, e.g. https://sync.example.org: the console's own origin "
            + "and its enrollment links (default: the request's Host).",
        mustBe: "an http or https URL like https://sync.example.org", parse: { ConsoleConfiguration.publicURL(parsing: $0) })
    static let accessLog = Option.value("access-log", "<path>", help: "Access log file, '-' for standard output (default), 'off' for none.")
    static let logFormat = Option.value(
        "log-format", "<text|json>", help: "The access log's and standard error's lines: text (default) or json (one OpenTelemetry-named object per line).",
        mustBe: LogFormat.allowed, parse: { LogFormat(rawValue: $0) })
    static let threads = Option.int("threads", "<n>", in: 1...256, help: "Server threads, each with an epoll loop (default: one per core).")
    static let maxConnections = Option.int(
        "max-connections", "<n>", in: 1...1_000_000,
        help: "Open connections at most, event streams included (default 20000); one over it is answered 503 with Retry-After: 1 "
            + "and Connection: close.")
    static let maxConnectionsPerIP = Option.int(
        "max-connections-per-ip", "<n>", in: 0...1_000_000,
        help: "Per client address, 0 for no limit (default 0: a venue's NAT is one address); one over it is answered 503 with "
            + "Retry-After: 1 and Connection: close.")
    static let idleTimeout = Option.int(
        "idle-timeout", "<seconds>", in: 1...86_400, help: "Close a connection silent this long: idle or too slow (default 15).")
    static let headerTimeout = Option.int(
        "header-timeout", "<seconds>", in: 1...3600, help: "A request's line, headers and body must arrive within this long (default 10).")
    static let enrollRate = Option.int(
        "enroll-rate", "<per-second>", in: 1...1_000_000, help: "Enrollments per second per client address (default 5, bursts of 50).")
    static let enrollBurst = Option.int("enroll-burst", "<n>", in: 1...1_000_000, help: "Enrollment burst per client address (default 50).")
    static let tokenEnrollRate = Option.int(
        "token-enroll-rate", "<per-second>", in: 1...1_000_000,
        help: "Enrollments per second per registration token, all addresses together, unless the token sets its own (default 20).")
    static let tokenEnrollBurst = Option.int(
        "token-enroll-burst", "<n>", in: 1...1_000_000, help: "Enrollment burst per registration token: the door rush (default 300).")
    static let staffChangeRate = Option.int(
        "staff-change-rate", "<per-second>", in: 1...1_000_000,
        help: "Changes per second a presenter's or moderator's staff token may make (default 10, bursts of 60); past it, 429 with Retry-After.")
    static let staffChangeBurst = Option.int(
        "staff-change-burst", "<n>", in: 1...1_000_000, help: "Burst of changes per presenter's or moderator's staff token (default 60).")
    static let tokenMaxStreams = Option.int(
        "token-max-streams", "<n>", in: 0...1_000_000,
        help: "Event streams open at once by the devices of one registration token, unless it sets its own (default: half of --max-connections).")
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
    static let answerTTL = Option.int(
        "answer-ttl", "<seconds>", in: 60...86_400,
        help: "How long a signed answer (Pulse-Signature) may be believed: its exp - iat (default 3600).")
    static let answerSigning = Option.value(
        "answer-signing", "<on|off>", help: "Sign manifest and keys answers (default on); off only for Scripts/bench/server's unsigned baseline.",
        mustBe: "on or off", parse: { ["on": true, "off": false][$0] })
    static let shutdownTimeout = Option.int(
        "shutdown-timeout", "<seconds>", in: 0...3600, help: "On SIGTERM, wait this long for requests in flight (default 10).")

    static func command(console: Console) -> Command {
        Command(
            name: "serve",
            abstract: "Serve the sync and key-release API (enroll, manifests, keys, events, diag) and the staff API.",
            discussion: """
                With --public PKG it also answers /api/sync/asset/<hash> and /api/sync/appconfig from the package's
                public part (as pulse-origin does), so one box serves the whole contract; without it those routes
                belong to pulse-origin or a CDN. Prints the address it listens on (port 0 picks a free one).
                SIGTERM, SIGINT, SIGQUIT: /readyz answers 503 at once; after --drain-delay seconds (a second signal cuts
                it short) stop accepting, end event streams cleanly, finish requests in flight and queued writes, exit 0. SIGHUP: reopen the access log and re-read the public index. SIGUSR1: reopen
                the access log. With --database (or PULSE_DATABASE_URL) the state and the device certificate keys live in
                PostgreSQL, shared by every instance behind a load balancer; --data is then optional (a key found there is
                adopted into the database). With a data folder it holds DIR/pulse-server.lock shared while it runs, so
                pulse-server restore refuses the folder meanwhile. See docs/server.md.
                """,
            options: [
                ServerCommand.dataOption, ServerCommand.databaseOption,
                listen, publicPackage, publicURL, trustedProxy, accessLog, logFormat, threads, maxConnections, maxConnectionsPerIP, idleTimeout, headerTimeout,
                enrollRate, enrollBurst, tokenEnrollRate, tokenEnrollBurst, tokenMaxStreams, staffChangeRate, staffChangeBurst, drainDelay,
                shutdownTimeout, metricsListen,
                answerTTL, answerSigning,
            ],
            validate: { arguments in try ServerCommand.checkStorageGiven(arguments, console) },
            run: { arguments in try run(arguments, console: console) })
    }

    struct Settings {
        var server = HTTPServer.Configuration()
        var sync = SyncConfiguration()
        var console = ConsoleConfiguration()
        var publicPackage: String?
        var accessLog = "-"
        var logFormat = LogFormat.text
        var drain = 10.0
        var drainDelay = 0.0
        /// `--metrics-listen`: nil, no metrics are collected and nothing more listens.
        var metricsListen: String?
        /// `--max-connections` was given: it must fit under the open-files limit (the default is lowered to fit).
        var maxConnectionsGiven = false
    }

    static func settings(_ arguments: Arguments) throws -> Settings {
        var settings = Settings()
        settings.server.listen = arguments[Self.listen] ?? "127.0.0.1:8080"
        settings.server.requestHeaders = SyncServer.requestHeaders
        settings.server.maxRequestBodyBytes = settings.sync.maxBodyBytes
        settings.server.maxConnections = 20_000
        settings.server.maxConnectionsPerIP = 0
        settings.server.streamHeartbeatSeconds = 15
        // Phones reconnect in waves (after a venue Wi-Fi hiccup): a short accept queue would drop SYNs,
        // which clients retry only after a second. The kernel caps it at net.core.somaxconn.
        settings.server.listenBacklog = 4096
        if let value = arguments[Self.threads] { settings.server.threads = value }
        if let value = arguments[Self.maxConnections] {
            settings.server.maxConnections = value
            settings.maxConnectionsGiven = true
        }
        if let value = arguments[Self.maxConnectionsPerIP] { settings.server.maxConnectionsPerIP = value }
        if let value = arguments[Self.idleTimeout] { settings.server.idleTimeoutSeconds = value }
        if let value = arguments[Self.headerTimeout] { settings.server.headerTimeoutSeconds = value }
        if let value = arguments[Self.enrollRate] { settings.sync.enrollLimit.rate = Double(value) }
        if let value = arguments[Self.enrollBurst] { settings.sync.enrollLimit.burst = Double(value) }
        if let value = arguments[Self.tokenEnrollRate] { settings.sync.tokenEnrollLimit.rate = Double(value) }
        if let value = arguments[Self.tokenEnrollBurst] { settings.sync.tokenEnrollLimit.burst = Double(value) }
        if let value = arguments[Self.staffChangeRate] { settings.sync.staffChangeLimit.rate = Double(value) }
        if let value = arguments[Self.staffChangeBurst] { settings.sync.staffChangeLimit.burst = Double(value) }
        settings.sync.tokenMaxStreams = arguments[Self.tokenMaxStreams] ?? settings.server.maxConnections / 2
        settings.drain = Double(arguments[Self.shutdownTimeout] ?? 10)
        settings.drainDelay = Double(arguments[Self.drainDelay] ?? 0)
        settings.sync.trustedProxies = arguments[Self.trustedProxy]
        settings.publicPackage = arguments[Self.publicPackage]
        settings.console.publicURL = arguments[Self.publicURL]
        settings.accessLog = arguments[Self.accessLog] ?? "-"
        settings.metricsListen = arguments[Self.metricsListen]
        settings.logFormat = arguments[Self.logFormat] ?? .text
        settings.sync.answerTTL = Int64(arguments[Self.answerTTL] ?? 3600)
        settings.sync.signAnswers = arguments[Self.answerSigning] ?? true
        return settings
    }

    static func run(_ arguments: Arguments, console: Console) throws -> Int32 {
        try ServerCommand.checkStorageGiven(arguments, console)
        let settings = try settings(arguments)
        let events = EventLog(service: "pulse-server", version: ToolVersion.current, format: settings.logFormat) { console.err($0) }
        do {
            return try serve(arguments, settings, console: console, events: events)
        } catch let error where settings.logFormat == .json && !(error is UsageError) {
            // As text, the error handler of `main` writes the error line; as JSON, it is one more event.
            events.error("\(error)")
            return ServerCommand.exitCode(for: error)
        }
    }

    private static func serve(_ arguments: Arguments, _ settings: Settings, console: Console, events: EventLog) throws -> Int32 {
        // Before any thread exists, so that every thread inherits the mask and the signals reach only the
        // loop below.
        ServerSignals.block()
        let connections = 2 * settings.server.threads + settings.sync.writeThreads + 2
        let requestedConnections = settings.server.maxConnections
        let descriptors = try checkDescriptors(settings, storageConnections: connections)
        var settings = settings
        settings.server.maxConnections = try descriptors.fit(maxConnections: requestedConnections, given: settings.maxConnectionsGiven)
        let storage: any ServerStorage
        let certificateKeys: CertificateKeyring
        let answerKeys: AnswerKeyring
        let stateName: String
        // Held for the life of the process (the kernel drops it at exit): `restore` refuses the folder meanwhile.
        var folderLock: FileLock?
        defer { folderLock?.release() }
        if let database = try ServerCommand.databaseURL(arguments, console) {
            // PostgreSQL, shared with other instances: the device certificate keys live there too, so every
            // instance signs with the same key. A --data folder's key (a single box's, or one copied by hand) is
            // adopted into the database, so the certificates it signed keep verifying.
            let folder = try arguments[ServerCommand.dataOption].map { _ in try ServerCommand.dataFolder(arguments) }
            let postgres = try PostgresStorage(url: database, connections: connections)
            if postgres.schemaVersions.found != postgres.schemaVersions.now {
                events.info("migrated the database schema from version \(postgres.schemaVersions.found) to \(postgres.schemaVersions.now)")
            }
            _ = try postgres.prepareCertificateKeys(adopting: try folder.flatMap(DeviceCertificateKey.existing), at: TimeText.now())
            certificateKeys = try CertificateKeyring(loading: { try postgres.certificateKeys() })
            // The answer-signing keys too (issue 21): one set for every instance; a --data folder's answer-key.pem
            // becomes the first when the database has none.
            // Their recorded TTL is raised to this instance's before it signs, so a rotation keeps them long enough.
            _ = try postgres.prepareAnswerKeys(
                adopting: try folder.flatMap(AnswerKeyFile.existing), signingFor: settings.sync.signAnswers ? settings.sync.answerTTL : nil,
                at: TimeText.now())
            answerKeys = try AnswerKeyring(loading: { try postgres.answerKeys() })
            storage = postgres
            stateName = "database \(postgres.configuration.redacted)"
        } else {
            let folder = try ServerCommand.dataFolder(arguments)
            folderLock = try folder.lockForServing()
            storage = try folder.openStorage(connections: connections)
            certificateKeys = CertificateKeyring(try DeviceCertificateKey.loadOrCreate(in: folder))
            let sqlite = storage as? SQLiteStorage
            // The answer-signing keys live in the database (a folder's answer-key.pem of an older version adopted).
            _ = try sqlite?.prepareAnswerKeys(
                adopting: try AnswerKeyFile.existing(in: folder), signingFor: settings.sync.signAnswers ? settings.sync.answerTTL : nil,
                at: TimeText.now())
            answerKeys = try AnswerKeyring(loading: { try sqlite?.answerKeys() ?? [] })
            stateName = "data \(folder.url.path)"
        }
        let resource = LogResource(serviceName: "pulse-server", serviceVersion: ToolVersion.current)
        let accessLog: AccessLog? = switch settings.accessLog {
        case "off": nil
        case "-": .standardOutput(format: settings.logFormat, resource: resource, route: ServerRoute.template)
        default: try .file(settings.accessLog, format: settings.logFormat, resource: resource, route: ServerRoute.template)
        }
        var origin: Origin?
        if let path = settings.publicPackage {
            origin = try Origin(configuration: OriginConfiguration(packageRoot: URL(fileURLWithPath: path)), accessLog: nil, alarm: events.alarm)
        }
        // Metrics only with --metrics-listen: without it no observer is made, and the responder is the server's own.
        let metrics = settings.metricsListen.map { _ in ServerMetrics(version: ToolVersion.current) }
        let metricsListener = try metrics.map { metrics in try listenForMetrics(settings.metricsListen ?? "", metrics.registry) }
        let sync = SyncServer(
            storage: storage, certificateKeys: certificateKeys, answerKeys: answerKeys, configuration: settings.sync, origin: origin, accessLog: accessLog, alarm: events.alarm,
            observer: metrics, console: settings.console)
        sync.start()
        let responder: any HTTPResponder = metrics.map { MeteredResponder(sync, meter: $0) } ?? sync
        let server = try HTTPServer(configuration: settings.server, responder: responder)
        metrics?.watch(sync: sync.sync, server: server, storage: storage)
        events.info("serving on http://\(server.boundAddress) (\(stateName), \(settings.server.threads) threads, "
            + "\(descriptors.summary(maxConnections: settings.server.maxConnections, lowered: requestedConnections)), pid \(SystemProcess.currentID)\(settings.publicPackage.map { ", public part of \($0)" } ?? ""))")
        if let metricsListener { events.info("metrics on http://\(metricsListener.boundAddress)/metrics") }
        let serviceManager = ServiceManager.current
        serviceManager.ready(status: "serving on http://\(server.boundAddress)")
        while true {
            let signal = ServerSignals.wait()
            let name = ServerSignals.name(signal)
            switch signal {
            case SIGHUP:
                serviceManager.reloading()
                var note = accessLog?.reopen() ?? "no access log to reopen"
                if let origin { note += "; " + origin.reloadIndex() }
                events.info("\(name): \(note)", ["pulse.signal": name])
                serviceManager.ready(status: "serving on http://\(server.boundAddress); \(name): \(note)")
            case SIGUSR1:
                events.info("\(name): \(accessLog?.reopen() ?? "no access log to reopen")", ["pulse.signal": name])
            case _ where ServerSignals.isTermination(signal):
                // Not ready before systemd hears STOPPING: whoever watches both sees /readyz 503 by then.
                sync.sync.readiness.beginDraining()
                serviceManager.stopping(status: "\(name): draining, then stopping")
                sync.sync.readiness.drain(for: settings.drainDelay) { events.info("\(name): \($0)", ["pulse.signal": name]) }
                events.info(
                    "\(name): closing \(sync.openStreams) event streams, finishing \(server.requestsInFlight) requests in flight, then stopping",
                    ["pulse.signal": name])
                stopWithin(seconds: settings.drain + 10, events: events)
                server.shutdown(drainSeconds: settings.drain)
                sync.stop(drainSeconds: settings.drain)
                metricsListener?.stop()
                events.info("stopped")
                return ExitCode.success
            default:
                events.info("\(name): ignored", ["pulse.signal": name])
            }
        }
    }

    /// Raises the open-files limit to the hard one: the budget `--max-connections` is fitted to. The reserve:
    /// `DescriptorBudget.baseReserve`, three files per storage connection (SQLite's database, WAL and
    /// shared memory; one socket each for PostgreSQL) and the metrics listener's connections.
    static func checkDescriptors(_ settings: Settings, storageConnections: Int) throws(HTTPServerError) -> HTTPServer.DescriptorBudget {
        let threads = settings.server.threads
        let metrics = settings.metricsListen == nil ? 0 : HTTPServer.DescriptorBudget.needed(maxConnections: MetricsListener.maxConnections, threads: MetricsListener.threads)
        let reserve = HTTPServer.DescriptorBudget.baseReserve + 3 * storageConnections + metrics
        let budget = HTTPServer.DescriptorBudget.raised(reserve: reserve, threads: threads)
            ?? HTTPServer.DescriptorBudget(limit: Int.max, reserve: reserve, threads: threads)
        return budget
    }

    /// The `--metrics-listen` listener; a failure names the option.
    static func listenForMetrics(_ address: String, _ registry: MetricsRegistry) throws -> MetricsListener {
        do throws(HTTPServerError) { return try MetricsListener(listen: address, registry: registry) } catch {
            throw MetricsListenError(description: "--metrics-listen: \(error)")
        }
    }

    struct MetricsListenError: Error, CustomStringConvertible {
        let description: String
    }

    /// If the stop has not finished `seconds` after it began (a thread stuck in a system call), say so and
    /// exit anyway: a stop request is never ignored.
    private static func stopWithin(seconds: Double, events: EventLog) {
        let watchdog = Thread {
            Thread.sleep(forTimeInterval: seconds)
            events.error("still not stopped \(Int(seconds)) s after the signal; exiting now")
            SystemProcess.exitImmediately(1)
        }
        watchdog.start()
    }
}
