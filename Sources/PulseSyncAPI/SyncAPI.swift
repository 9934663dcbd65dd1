import Foundation
import PulseCrypto
import PulseHTTPServer
import PulseOrigin
import PulseServerStorage

/// The contract's device routes, and (with `--public`) the origin's asset and app-config routes, as one
/// `HTTPResponder`; pulse-server's `SyncServer` routes `/api/staff/…` to `StaffAPI` (PulseStaffAPI) and the rest
/// here. It also holds what the other responders share: the storage, the cache, the event hub, the write queue. The decisions are the pure functions of
/// part 1 (`ReleasePolicy`, `ManifestView`); this layer gathers their inputs (the authenticated device,
/// the cached session, the client address) and writes their output.
///
/// | route | file |
/// |---|---|
/// | `POST /api/sync/enroll`, `GET /api/sync/device-cert-keys`, `GET /api/sync/time` | SyncAPI+Enroll.swift |
/// | `Pulse-Signature` on signed answers, `GET /api/sync/answer-keys` | SyncAPI+Signing.swift, AnswerSigner.swift |
/// | `X-Pulse-Device` checks for every device-scoped route | SyncAPI+Device.swift |
/// | `GET /api/sync/manifest`, `/api/sync/series/{id}/manifest`, `/api/sync/keys` | SyncAPI+Content.swift |
/// | `GET /api/sync/events` | SyncAPI+Events.swift, EventHub.swift |
/// | `POST /api/sessions/{id}/diag` | SyncAPI+Diag.swift |
/// | `GET /healthz`, `GET /livez`, `GET /readyz` | SyncAPI.swift, Readiness.swift (PulseHTTPServer) |
public final class SyncAPI: HTTPResponder {
    public let configuration: SyncConfiguration
    public let storage: any ServerStorage
    public let cache: SyncCache
    let certificateKeys: CertificateKeyring
    /// Signs the manifest, series manifest, keys and answer-key answers (`Pulse-Signature`); nil when
    /// `configuration.signAnswers` is off (the unsigned baseline of Scripts/bench/server).
    let answerSigner: AnswerSigner?
    public let answers = SyncAnswers()
    /// `/readyz` answers 503 once a stop has begun (`beginDraining()`), before the listener closes.
    public let readiness = Readiness()
    public let hub: EventHub
    /// Which devices hold which slides' keys (the console's clicker).
    public let keyHolders = KeyHolders()
    /// The diag samples stored since the console's live view last looked (`LiveSamples`).
    public let liveSamples = LiveSamples()
    let writes: WorkQueue
    let origin: (any HTTPResponder)?
    let accessLog: AccessLog?
    /// The server's clock: Unix seconds with a fraction. Tests pass their own.
    public let clock: @Sendable () -> Double
    public let alarm: @Sendable (String) -> Void
    /// Told about writes and live advances (`--metrics-listen`); nil measures nothing.
    public let observer: (any SyncObserver)?

    /// The request headers the routes read (the origin's too, for `--public`).
    public static let requestHeaders = [
        "x-pulse-device", "authorization", "if-none-match", "x-forwarded-for", "last-event-id", "accept",
    ] + Origin.requestHeaders.filter { $0 != "if-none-match" }

    /// - Parameters:
    ///   - certificateKeys: the key that signs device certificates and those published (`CertificateKeyring`).
    ///   - answerKeys: the keys that sign answers (`AnswerKeyring`); nil: a random key of this process.
    ///   - origin: answers `/api/sync/asset/…` and `/api/sync/appconfig` (`serve --public`); nil: those are 404.
    ///   - accessLog: one line per request, never a token, key, signature or code (see `finished`).
    ///   - clock: Unix seconds; the default is the system clock.
    ///   - alarm: operational messages (a storage failure behind a 500).
    ///   - observer: told about writes and live advances (metrics); nil measures nothing.
    public init(
        storage: any ServerStorage, certificateKeys: CertificateKeyring, answerKeys: AnswerKeyring? = nil,
        configuration: SyncConfiguration = SyncConfiguration(),
        origin: (any HTTPResponder)? = nil, accessLog: AccessLog? = nil,
        clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
        alarm: @escaping @Sendable (String) -> Void = SyncAPI.standardError,
        observer: (any SyncObserver)? = nil
    ) {
        self.configuration = configuration
        if configuration.signAnswers, let keyring = answerKeys ?? (try? P256.PrivateKey()).map(AnswerKeyring.init) {
            answerSigner = AnswerSigner(keyring: keyring, ttl: configuration.answerTTL)
        } else {
            answerSigner = nil
        }
        self.storage = storage
        self.cache = SyncCache(storage: storage)
        self.certificateKeys = certificateKeys
        self.origin = origin
        self.accessLog = accessLog
        self.clock = clock
        self.alarm = alarm
        self.observer = observer
        var finished: (@Sendable (Double) -> Void)?
        if let observer { finished = { seconds in observer.writeFinished(seconds: seconds) } }
        self.writes = WorkQueue(
            threads: configuration.writeThreads, maxQueued: configuration.maxQueuedWrites, name: "sync-write", finished: finished)
        self.hub = EventHub(cache: cache, configuration: configuration, clock: clock, alarm: alarm, observer: observer)
        // "K of D devices have this slide's key" counts no revoked device, whoever revoked it. A revocation is
        // rare, so one read of the devices then is cheap.
        hub.onDevicesChanged { [keyHolders, storage] in
            keyHolders.forget(devices: Set(try storage.devices().lazy.filter(\.isRevoked).map(\.id)))
        }
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

    public static let standardError: @Sendable (String) -> Void = { message in
        FileHandle.standardError.write(Data("pulse-server: \(message)\n".utf8))
    }

    /// Starts the event hub's watcher (SSE fan-out of changes made anywhere), and parses the enrolled
    /// devices' keys on a background thread.
    public func start() {
        hub.start()
        let cache = self.cache, alarm = self.alarm
        let warm = Thread {
            do { try cache.warmPublicKeys() } catch { alarm("cannot read the devices to prepare their keys: \(error)") }
        }
        warm.name = "sync-warm-keys"
        warm.qualityOfService = .background
        warm.start()
    }

    /// Stops the hub and lets queued writes finish (SIGTERM, after the HTTP server stopped accepting).
    public func stop(drainSeconds: Double = 10) {
        hub.stop()
        writes.drain(within: drainSeconds)
    }

    /// Event streams open now.
    public var openStreams: Int { hub.streamCount }

    /// Writes waiting for a write thread now.
    public var queuedWrites: Int { writes.depth }

    public func finished(_ exchange: HTTPExchange) {
        accessLog?.record(exchange)
    }

    // MARK: Routing

    static let enrollPath = Array("/api/sync/enroll".utf8)
    static let keysPath = Array("/api/sync/keys".utf8)
    static let manifestPath = Array("/api/sync/manifest".utf8)
    static let eventsPath = Array("/api/sync/events".utf8)
    static let timePath = Array("/api/sync/time".utf8)
    static let certificateKeysPath = Array("/api/sync/device-cert-keys".utf8)
    static let answerKeysPath = Array("/api/sync/answer-keys".utf8)
    static let seriesPrefix = Array("/api/sync/series/".utf8)
    static let manifestSuffix = Array("/manifest".utf8)
    static let sessionsPrefix = Array("/api/sessions/".utf8)
    static let diagSuffix = Array("/diag".utf8)
    static let assetPrefix = Array("/api/sync/asset/".utf8)
    static let appconfigPath = Array("/api/sync/appconfig".utf8)
    static let healthPath = Array("/healthz".utf8)

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let (path, query) = Self.split(request.target)
        return answer(request, path: path) {
            if Bytes.equal(path, Self.keysPath) { return try deviceRoute(request, .keys(query)) }
            if Bytes.equal(path, Self.manifestPath) { return try deviceRoute(request, .manifest(query)) }
            if Bytes.equal(path, Self.eventsPath) { return try deviceRoute(request, .events(query)) }
            if let id = Self.middle(path, Self.seriesPrefix, Self.manifestSuffix) { return try deviceRoute(request, .seriesManifest(id)) }
            if let id = Self.middle(path, Self.sessionsPrefix, Self.diagSuffix) { return try deviceRoute(request, .diag(id)) }
            if Bytes.equal(path, Self.enrollPath) { return try enroll(request) }
            if Bytes.equal(path, Self.timePath) { return time(request) }
            if Bytes.equal(path, Self.certificateKeysPath) {
                guard isRead(request) else { return HTTPResponse(answers.readOnly, "method") }
                return HTTPResponse(certificateKeys.keys(at: try cache.revalidate()).published, "cert-keys")
            }
            if Bytes.equal(path, Self.answerKeysPath) {
                guard isRead(request) else { return HTTPResponse(answers.readOnly, "method") }
                return try answerKeys()
            }
            if Bytes.hasPrefix(path, Self.assetPrefix) || Bytes.equal(path, Self.appconfigPath) {
                return origin?.respond(to: request) ?? HTTPResponse(answers.notFound, "no:no-origin")
            }
            if Bytes.equal(path, Self.healthPath) { return isRead(request) ? try health() : HTTPResponse(answers.readOnly, "method") }
            if Readiness.isProbe(path) { return isRead(request) ? probe(path) : HTTPResponse(answers.readOnly, "method") }
            return HTTPResponse(answers.notFound, "no:route")
        }
    }

    /// A request target's path and query (without the `?`).
    public static func split(_ target: [UInt8]) -> (path: ArraySlice<UInt8>, query: ArraySlice<UInt8>) {
        let split = target.firstIndex(of: UInt8(ascii: "?")) ?? target.count
        return (target[..<split], split < target.count ? target[(split + 1)...] : [])
    }

    /// A request path for an alarm line: what a client sent, so control and bidi characters are escaped
    /// and a byte that is not UTF-8 shows as U+FFFD (never raw bytes a terminal would act on).
    static func printable(_ path: ArraySlice<UInt8>) -> String {
        DeviceText.escaped(String(decoding: path, as: UTF8.self), quotes: false)
    }

    /// `route`'s answer; when it throws, 503 while the database is away, else 500, each with an alarm.
    public func answer(_ request: HTTPRequest, path: ArraySlice<UInt8>, _ route: () throws -> HTTPResponse) -> HTTPResponse {
        do {
            return try route()
        } catch let error as ServerError where error.kind == .unavailable {
            // The database is away (restarting, failing over): never an answer made up without it.
            alarm("database unavailable answering \(request.method) \(Self.printable(path)): \(error)")
            return HTTPResponse(answers.unavailable, "db-unavailable")
        } catch {
            alarm("error answering \(request.method) \(Self.printable(path)): \(error)")
            return HTTPResponse(answers.internalError, "error")
        }
    }

    /// The id between `prefix` and `suffix` of `path`, when it is one path segment.
    static func middle(_ path: ArraySlice<UInt8>, _ prefix: [UInt8], _ suffix: [UInt8]) -> String? {
        guard path.count > prefix.count + suffix.count, path.starts(with: prefix), path.reversed().starts(with: suffix.reversed()) else {
            return nil
        }
        let id = path[(path.startIndex + prefix.count)..<(path.endIndex - suffix.count)]
        guard !id.contains(UInt8(ascii: "/")) else { return nil }
        return String(decoding: id, as: UTF8.self)
    }

    public func isRead(_ request: HTTPRequest) -> Bool { request.method == .get || request.method == .head }

    /// Whole seconds of the server's clock.
    public func seconds(_ now: Double) -> Int64 { Int64(now.rounded(.down)) }

    /// `GET /healthz`: 200 while storage answers (503 while the database cannot be reached); another method is 405,
    /// as on pulse-origin.
    private func health() throws -> HTTPResponse {
        try storage.checkAvailable()
        try cache.revalidate()
        return HTTPResponse(answers.healthy, "health")
    }

    /// `GET /livez` and `GET /readyz` (see `Readiness`): ready while storage answers and no stop has begun.
    private func probe(_ path: ArraySlice<UInt8>) -> HTTPResponse {
        readiness.answer(path) {
            do {
                try storage.checkAvailable()
                return HTTPResponse(answers.healthy, "ready")
            } catch {
                return HTTPResponse(answers.unavailable, "not-ready")
            }
        }
    }

    /// `GET /api/sync/time`: the server's clock, for display only; nothing in the server uses a device's.
    func time(_ request: HTTPRequest) -> HTTPResponse {
        guard isRead(request) else { return HTTPResponse(answers.readOnly, "method") }
        let now = seconds(clock())
        return SyncAnswers.json(200, ["unixSeconds": .int(Int(now)), "iso": .string(TimeText.iso(now))], note: "time")
    }

    /// Runs `work` on a write thread and answers when it is done; 503 when the queue is full.
    public func deferredWrite(_ note: String, _ work: @escaping @Sendable () throws -> HTTPResponse) -> HTTPResponse {
        let later = HTTPDeferredResponse()
        let accepted = writes.submit { [self] in
            do {
                later.complete(try work())
            } catch let error as ServerError where error.kind == .unavailable {
                alarm("database unavailable in \(note): \(error)")
                later.complete(HTTPResponse(answers.unavailable, "db-unavailable"))
            } catch let error as ServerError where error.kind != .storage && error.kind != .unsafeFile {
                later.complete(SyncAnswers.error(error))
            } catch {
                alarm("error in \(note): \(error)")
                later.complete(HTTPResponse(answers.internalError, "error"))
            }
        }
        guard accepted else { return HTTPResponse(answers.unavailable, "queue-full") }
        return HTTPResponse(later)
    }
}
