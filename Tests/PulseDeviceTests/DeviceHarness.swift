import Foundation
import PulseServer
import PulseServerStorage
import PulseTestSupport
import SyncTestSupport
import Synchronization
@testable import PulseDevice

/// A device enrolled with a real server in this process, talking URLSession over loopback.
final class TestDevice: @unchecked Sendable {
    let temporary: TestFolder
    let folder: DeviceFolder
    let identity: DeviceIdentity
    let transport = URLSessionTransport(timeout: 20, connectionsPerHost: 4)
    let client: SyncClient
    let cache: DeviceCache

    convenience init(_ server: TestSyncServer, token: String, name: String = #function) throws {
        try self.init(server.url, token: token, name: name)
    }

    /// A device of the server at `url` (a proxy in front of one), signing with `clock`.
    init(_ url: URL, token: String, clock: DeviceClock = DeviceClock(), name: String = #function) throws {
        temporary = try TestFolder(name)
        folder = try DeviceFolder.open(temporary.path("device"), create: true)
        identity = try Enrollment.enroll(server: url, token: token, folder: folder, name: "Test phone", platform: "ios", transport: transport)
        client = SyncClient(server: url, transport: transport, signer: RequestSigner(deviceId: identity.deviceId, key: try folder.key()), clock: clock)
        cache = DeviceCache(folder: folder)
    }

    /// The answer state in the device folder.
    var answers: AnswerState { get throws { try AnswerState.read(folder.answersURL) } }

    deinit { transport.invalidate() }

    func sync(_ target: Syncer.Target, assets: URL? = nil) throws -> SyncReport {
        try Syncer(cache: cache, client: client, assetsBase: assets).sync(target)
    }

    func keys(_ session: String) throws -> ReleasedKeys {
        try ReleasedKeys.fetch(session: session, client: client, answers: AnswerGuard(folder: folder, client: client))
    }

    /// Every byte of every file in the device folder.
    func everyFileBytes() throws -> [(String, [UInt8])] {
        let enumerator = FileManager.default.enumerator(atPath: folder.path)
        var files: [(String, [UInt8])] = []
        while let name = enumerator?.nextObject() as? String {
            let path = folder.url.appendingPathComponent(name).path
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue {
                files.append((name, Array(try Data(contentsOf: URL(fileURLWithPath: path)))))
            }
        }
        return files
    }
}

/// Runs a `Watcher` on a thread of its own and collects what it reports.
final class WatchRun: Sendable {
    private final class State: Sendable {
        let updates = Mutex<[(WatchUpdate, Double)]>([])
        let failure = Mutex<(any Error)?>(nil)
    }

    private let state = State()
    let cancellation = Cancellation()
    let finished = DispatchSemaphore(value: 0)

    init(_ device: TestDevice, session: String, options: Watcher.Options = Watcher.Options()) {
        let state = self.state, cancellation = self.cancellation, finished = self.finished
        let watcher = Watcher(session: session, client: device.client, cache: device.cache, options: options) { update in
            state.updates.withLock { $0.append((update, Date().timeIntervalSince1970)) }
        }
        Thread {
            do { try watcher.run(cancellation: cancellation) } catch { state.failure.withLock { $0 = error } }
            finished.signal()
        }.start()
    }

    deinit { cancellation.cancel() }

    var failure: (any Error)? { state.failure.withLock { $0 } }

    /// The slides reported unlocked, with the deckVersion and when the report came.
    var unlocked: [(slide: Int, deck: Int, at: Double, eventToKey: Double)] {
        state.updates.withLock { list in
            list.compactMap { update, at in
                if case let .unlocked(slide, deck, _, _, eventAt, keyAt) = update { return (slide, deck, at, keyAt - eventAt) }
                return nil
            }
        }
    }

    var syncs: [SyncReport] {
        state.updates.withLock { list in list.compactMap { if case let .synced(report) = $0.0 { return report }; return nil } }
    }

    var isConnected: Bool { state.updates.withLock { $0.contains { if case .connected = $0.0 { return true }; return false } } }

    var problems: [String] { state.updates.withLock { $0.compactMap { if case let .problem(text) = $0.0 { return text }; return nil } } }
}
