import Foundation
import PulseCore
import PulseCrypto
import PulseHTTPServer
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Synchronization
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseSyncAPI

/// A clock the test moves: the server's only source of time.
final class TestClock: Sendable {
    private let value: Mutex<Double>
    init(_ start: Double = 1_800_000_000) { value = Mutex(start) }
    var now: Double { value.withLock { $0 } }
    var seconds: Int64 { Int64(now.rounded(.down)) }
    func advance(by seconds: Double) { value.withLock { $0 += seconds } }
    func set(_ seconds: Double) { value.withLock { $0 = seconds } }
}

/// pulse-server's HTTP half in this process (SyncTestSupport's `TestSyncServer`: the configuration `serve`
/// uses, the real responder) driven by a test clock, with the seeding and enrolling pulse-server's own
/// tests need.
final class SyncHarness: Sendable {
    let base: TestSyncServer
    let clock: TestClock
    let alarms = Lines()
    var folder: TestFolder { base.folder }
    var data: DataFolder { base.data }
    var storage: any ServerStorage { base.storage }
    var certificateKey: DeviceCertificateKey { base.certificateKey }
    var sync: SyncServer { base.sync }
    var server: HTTPServer { base.server }
    var administration: Administration { Administration(storage: storage, clock: { [clock] in clock.seconds }) }

    init(
        _ name: String = #function, clock: TestClock = TestClock(),
        configure: (inout SyncConfiguration) -> Void = { _ in }, serverConfigure: (inout HTTPServer.Configuration) -> Void = { _ in },
        origin: (any HTTPResponder)? = nil, storage makeStorage: (() throws -> any ServerStorage)? = nil
    ) throws {
        self.clock = clock
        let alarms = self.alarms
        base = try TestSyncServer(
            package: nil, name, clock: { clock.now }, alarm: { alarms.add(err: $0) }, configure: configure,
            serverConfigure: serverConfigure, origin: origin, storage: makeStorage)
    }

    var port: UInt16 { server.port }

    func client(source: String? = nil, timeout: Double = 10) throws -> RawHTTPConnection {
        try RawHTTPConnection(host: "127.0.0.1", port: Int(server.port), timeout: timeout, source: source)
    }

    /// Imports sessions (10 slides each unless given), a series `conf` listing them when `series` is set.
    @discardableResult
    func seed(_ ids: [String], slides: Int = 10, series: String? = nil, state: SessionState? = nil) throws -> [SessionRecord] {
        let sessions = ids.map { TestContent.session($0, slides: slides, series: series) }
        let seriesImports = series.map { [TestContent.series($0, sessions: ids)] } ?? []
        _ = try storage.importContent(TestContent.plan(sessions, series: seriesImports), options: ImportOptions(), at: clock.seconds)
        return try ids.map { id in
            if let state { _ = try storage.updateSession(id: id, SessionUpdate(state: state), at: clock.seconds) }
            return try #require(try storage.session(id: id))
        }
    }

    func code(_ scope: DeviceScope) throws -> String { try administration.createDeviceCode(scope: scope).text }

    func staffToken() throws -> String { try administration.createStaffToken().text }

    /// Enrolls a new device with `token` over HTTP.
    func enroll(_ token: String, name: String = "Test phone") throws -> TestDevice {
        let key = try P256.PrivateKey()
        let response = try client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: token, key: key, name: name))
        guard response.status == 200, let id = try JSONValue.parse(Data(response.body))["deviceId"]?.stringValue else {
            throw RawHTTPConnection.Failure("enroll answered \(response.status): \(response.text)")
        }
        return TestDevice(id: id, key: key)
    }

    /// A device enrolled for session `id` (or series).
    func device(for scope: DeviceScope) throws -> TestDevice { try enroll(try code(scope)) }
}

/// An enrolled device: its id and private key; signs requests as the contract says.
struct TestDevice: Sendable {
    let id: String
    let key: P256.PrivateKey

    static func enrollBody(token: String, key: P256.PrivateKey, name: String = "Test phone", platform: String = "ios") -> [UInt8] {
        JSONValue.object([
            "token": .string(token), "publicKey": .string(Data(key.publicKey.derRepresentation).base64EncodedString()),
            "platform": .string(platform), "name": .string(name),
        ]).canonicalBytes
    }

    func header(_ method: String, _ target: String, body: [UInt8]? = nil, at timestamp: Int64) throws -> String {
        try DeviceSignature.sign(method: method, target: target, body: body, deviceId: id, key: key, at: timestamp).headerValue
    }
}

extension RawHTTPConnection {
    /// A request signed by `device` at `timestamp`.
    func signed(
        _ method: String, _ target: String, by device: TestDevice, at timestamp: Int64, body: [UInt8] = [], headers: [(String, String)] = []
    ) throws -> RawHTTPResponse {
        let header = try device.header(method, target, body: body.isEmpty ? nil : body, at: timestamp)
        return try request(method, target, [("X-Pulse-Device", header)] + headers, body: body)
    }
}

extension RawHTTPResponse {
    var json: JSONValue? { try? JSONValue.parse(Data(body)) }

    /// The body as JSON; throws when it is not.
    func decodedJSON() throws -> JSONValue { try JSONValue.parse(Data(body)) }

    /// The raw bytes without the `Date` header line (libmicrohttpd adds it; its value moves with the clock).
    var rawWithoutDate: [UInt8] {
        let text = String(decoding: raw, as: UTF8.self)
        return Array(text.split(separator: "\r\n", omittingEmptySubsequences: false).filter { !$0.lowercased().hasPrefix("date:") }
            .joined(separator: "\r\n").utf8)
    }
}
