import Foundation
import PulseConsole
import PulseHTTPServer
import PulseOrigin
import PulseServerStorage
import PulseStaffAPI
import PulseSyncAPI

/// pulse-server's one `HTTPResponder`: `/api/staff/…` goes to the staff responder (PulseStaffAPI), everything
/// else to the sync responder (PulseSyncAPI: the contract's device routes, `/healthz`, and with `--public` the
/// origin's). A new surface (the console, metrics) is one more responder module and one more prefix here.
///
/// | prefix | responder |
/// |---|---|
/// | `/api/staff/` | `StaffAPI` (StaffAPI.swift, StaffAPI+Sessions.swift) |
/// | `/console`, `/console/` | `Console` (PulseConsole: the staff console's pages, docs/console.md) |
/// | anything else | `SyncAPI` (SyncAPI.swift and its extensions) |
public final class SyncServer: HTTPResponder {
    /// The sync responder, which also holds what the others share (storage, cache, event hub, write queue).
    public let sync: SyncAPI
    /// The staff responder: the console authenticates with `staff.principal(tokenHash:now:)` and routes with
    /// `staff.respond(to:as:)`, sharing this server's storage, cache and write queue.
    public let staff: StaffAPI
    /// The staff console (`/console`), built on `staff`.
    public let console: Console

    /// The request headers the routes read (the origin's too, for `--public`; the console's).
    public static let requestHeaders = SyncAPI.requestHeaders + Console.requestHeaders.filter { !SyncAPI.requestHeaders.contains($0) }
    public static let standardError = SyncAPI.standardError

    /// See `SyncAPI.init`.
    public init(
        storage: any ServerStorage, certificateKeys: CertificateKeyring, answerKeys: AnswerKeyring? = nil,
        configuration: SyncConfiguration = SyncConfiguration(),
        origin: (any HTTPResponder)? = nil, accessLog: AccessLog? = nil,
        clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
        alarm: @escaping @Sendable (String) -> Void = SyncAPI.standardError,
        observer: (any SyncObserver)? = nil, console consoleConfiguration: ConsoleConfiguration = ConsoleConfiguration()
    ) {
        sync = SyncAPI(
            storage: storage, certificateKeys: certificateKeys, answerKeys: answerKeys, configuration: configuration, origin: origin, accessLog: accessLog, clock: clock,
            alarm: alarm, observer: observer)
        staff = StaffAPI(sync: sync)
        console = Console(sync: sync, staff: staff, configuration: consoleConfiguration)
    }

    /// A server whose certificates are signed by `certificateKey` alone (one box).
    public convenience init(
        storage: any ServerStorage, certificateKey: DeviceCertificateKey, configuration: SyncConfiguration = SyncConfiguration(),
        origin: (any HTTPResponder)? = nil, accessLog: AccessLog? = nil,
        clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
        alarm: @escaping @Sendable (String) -> Void = SyncAPI.standardError
    ) {
        self.init(
            storage: storage, certificateKeys: CertificateKeyring(certificateKey), configuration: configuration, origin: origin,
            accessLog: accessLog, clock: clock, alarm: alarm)
    }

    public var configuration: SyncConfiguration { sync.configuration }
    var storage: any ServerStorage { sync.storage }
    var cache: SyncCache { sync.cache }
    var hub: EventHub { sync.hub }

    /// See `SyncAPI.start`.
    public func start() { sync.start() }
    /// See `SyncAPI.stop`.
    public func stop(drainSeconds: Double = 10) {
        console.stop()
        sync.stop(drainSeconds: drainSeconds)
    }
    /// Event streams open now.
    public var openStreams: Int { sync.openStreams }

    static let staffPrefix = Array("/api/staff/".utf8)

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        if request.target.starts(with: Self.staffPrefix) { return staff.respond(to: request) }
        if Console.isConsolePath(request.target) { return console.respond(to: request) }
        return sync.respond(to: request)
    }

    /// The access log (one line per request, whichever responder answered).
    public func finished(_ exchange: HTTPExchange) { sync.finished(exchange) }
}
