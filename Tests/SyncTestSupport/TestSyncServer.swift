import Foundation
import PulseHTTPServer
import PulseOrigin
import PulseServer
import PulseServerStorage
import PulseSyncAPI
import PulseServerCLI
import PulseCommandLine
import PulseTestSupport

/// pulse-server's responder in this process on a free loopback port, with a data folder of its own: the
/// one in-process server of the test suites (pulse-server's own tests add a test clock and seeding on top,
/// in `SyncHarness`; the device and conformance tests use it as is). Optionally the package imported and
/// its public part served too (as `serve --public`), another storage (PostgreSQL shared with other
/// servers), a clock, and a wrapper around the responder (a `Breaker`, a `CountingResponder`; it gets the
/// storage too, to decide what to break). Changes through `administration` reach the event streams
/// within the watcher's poll (50 ms here), as changes by another instance would.
public final class TestSyncServer: @unchecked Sendable {
    public let folder: TestFolder
    public let data: DataFolder
    public let storage: any ServerStorage
    public let certificateKey: DeviceCertificateKey
    public let sync: SyncServer
    public let responder: any HTTPResponder
    public let server: HTTPServer
    public var administration: Administration { Administration(storage: storage) }

    public init(
        package: SamplePackage? = nil, publicPart: Bool = true, _ name: String = #function,
        clock: (@Sendable () -> Double)? = nil, alarm: @escaping @Sendable (String) -> Void = { _ in },
        configure: (inout SyncConfiguration) -> Void = { _ in },
        serverConfigure: (inout HTTPServer.Configuration) -> Void = { _ in },
        origin: (any HTTPResponder)? = nil, storage makeStorage: (() throws -> any ServerStorage)? = nil,
        storedAnswerKeys: Bool = false,
        wrap: (SyncServer, any ServerStorage) -> any HTTPResponder = { sync, _ in sync }
    ) throws {
        folder = try TestFolder(name)
        data = try DataFolder.prepare(folder.path("data"))
        // The data folder's SQLite file, or the storage given (PostgreSQL shared with other servers).
        storage = try makeStorage?() ?? data.openStorage()
        if let package { try Self.importPackage(package.root, data: data) }
        certificateKey = try DeviceCertificateKey.loadOrCreate(in: data)
        var configuration = SyncConfiguration()
        configuration.eventPollSeconds = 0.05
        configure(&configuration)
        let served = try origin ?? package.flatMap { package in
            publicPart ? try Origin(configuration: OriginConfiguration(packageRoot: package.root), accessLog: nil, alarm: { _ in }) : nil
        }
        if storedAnswerKeys, let keys = storage as? any AnswerKeyStorage {
            // As `pulse-server serve` does: the answer keys from the database, read again after a rotation.
            _ = try keys.prepareAnswerKeys(adopting: nil, signingFor: configuration.answerTTL, at: Int64(Date().timeIntervalSince1970))
            sync = SyncServer(
                storage: storage, certificateKeys: CertificateKeyring(certificateKey), answerKeys: try AnswerKeyring(loading: { try keys.answerKeys() }),
                configuration: configuration, origin: served, clock: clock ?? { Date().timeIntervalSince1970 }, alarm: alarm)
        } else if let clock {
            sync = SyncServer(
                storage: storage, certificateKey: certificateKey, configuration: configuration, origin: served, clock: clock, alarm: alarm)
        } else {
            sync = SyncServer(storage: storage, certificateKey: certificateKey, configuration: configuration, origin: served, alarm: alarm)
        }
        sync.start()
        responder = wrap(sync, storage)
        var settings = HTTPServer.Configuration()
        settings.listen = "127.0.0.1:0"
        settings.threads = 2
        settings.requestHeaders = SyncServer.requestHeaders
        settings.maxRequestBodyBytes = configuration.maxBodyBytes
        settings.maxConnectionsPerIP = 0
        serverConfigure(&settings)
        server = try HTTPServer(configuration: settings, responder: responder)
    }

    deinit {
        server.stop()
        sync.stop(drainSeconds: 2)
    }

    public var port: UInt16 { server.port }
    public var url: URL { URL(string: "http://127.0.0.1:\(server.port)")! }

    /// `pulse-server import --data … PACKAGE`, as an operator runs it (another storage connection).
    public func importPackage(_ package: SamplePackage) throws { try Self.importPackage(package.root, data: data) }

    static func importPackage(_ root: URL, data: DataFolder) throws {
        let lines = LockedLines()
        let console = Console(out: { lines.add($0) }, err: { lines.add($0) })
        let code = ServerCommand.main(["import", "--data", data.url.path, root.path], console: console)
        guard code == 0 else { throw TestFailure("import failed (\(code)): \(lines.all.joined(separator: "\n"))") }
    }

    public func staffToken() throws -> String { try administration.createStaffToken().text }
    public func deviceCode(_ scope: DeviceScope) throws -> String { try administration.createDeviceCode(scope: scope).text }
    public func registrationToken(series: String) throws -> String {
        try administration.createRegistrationToken(series: series, maxDevices: nil).text
    }

    @discardableResult
    public func set(_ session: String, _ update: SessionUpdate) throws -> SessionRecord { try administration.setSession(id: session, update) }

    public func advance(_ session: String, to slide: Int) throws { _ = try administration.advance(sessionId: session, to: slide) }

    /// The session's current key table (for comparing decrypted slides).
    public func keyTable(_ session: String) throws -> KeyTableRecord {
        guard let record = try storage.session(id: session), let table = try storage.keyTable(sessionId: session, deckVersion: record.deckVersion) else {
            throw TestFailure("no key table for \(session)")
        }
        return table
    }
}

/// pulse-origin's responder alone on a port of its own: a CDN in front of the package's public part.
public final class TestOrigin: @unchecked Sendable {
    public let counter: CountingResponder
    let server: HTTPServer

    public init(package: SamplePackage) throws {
        counter = CountingResponder(try Origin(configuration: OriginConfiguration(packageRoot: package.root), accessLog: nil, alarm: { _ in }))
        var settings = HTTPServer.Configuration()
        settings.listen = "127.0.0.1:0"
        settings.threads = 2
        settings.requestHeaders = Origin.requestHeaders
        settings.maxConnectionsPerIP = 0
        server = try HTTPServer(configuration: settings, responder: counter)
    }

    deinit { server.stop() }

    public var url: URL { URL(string: "http://127.0.0.1:\(server.port)")! }
}

public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

final class LockedLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
