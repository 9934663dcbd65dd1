import Foundation
import PulseServer
import PulseServerStorage
import PulseTestSupport
import SyncTestSupport
import Synchronization
import Testing
@testable import PulseDevice
import PulseCommandLine
import PulseCore
import PulseDeviceCLI

/// pulse-device behind a hostile loopback proxy (`HostileProxy`) in front of a signing pulse-server: each
/// attack is refused with its rule, the previous cache stays usable, the report says so; a clean proxy
/// changes nothing.
@Suite struct HostileProxyTests {
    /// pulse-server, which signs (answer TTL an hour, its clock movable), a proxy in front of it, two devices of
    /// session `workshop` enrolled through the proxy, both synced to deck v1 and then v2.
    final class World: @unchecked Sendable {
        let work: TestFolder
        let package: SamplePackage
        let clock = ServerClock()
        let server: TestSyncServer
        let proxy: HostileProxy
        let device: TestDevice
        let other: TestDevice
        var v1: [UInt8] = []
        var v2: [UInt8] = []

        /// - Parameter deviceFollowsServerClock: the device signs with the server's clock (offset included), so no
        ///   signature of its goes stale when a test moves that clock and it never needs `GET /api/sync/time`.
        init(_ name: String = #function, deviceFollowsServerClock: Bool = false) throws {
            work = try TestFolder(name)
            package = try SamplePackage.build(in: work.url)
            let shared = self.clock
            let clock: @Sendable () -> Double = { shared.now }
            server = try TestSyncServer(package: package, name, clock: clock)
            proxy = try HostileProxy(upstream: server.port)
            device = try TestDevice(
                proxy.url, token: try server.deviceCode(.session("workshop")),
                clock: deviceFollowsServerClock ? DeviceClock(system: clock) : DeviceClock(), name: name + "A")
            other = try TestDevice(proxy.url, token: try server.deviceCode(.session("workshop")), name: name + "B")
            for one in [device, other] { #expect(try one.sync(.session("workshop")).refusals.isEmpty) }
            v1 = try #require(try device.cache.sessionManifest("workshop")).bytes
            try package.replaceWorkshopSlide(5)
            try package.rebuild()
            try server.importPackage(package)
            for one in [device, other] { #expect(try one.sync(.session("workshop")).items.first?.outcome == .updated) }
            v2 = try #require(try device.cache.sessionManifest("workshop")).bytes
        }

        deinit { proxy.stop() }
    }

    static let attacks: [(HostileProxy.Mode, String)] = [
        (.replayOlder, "rollback"), (.stripSignature, "signature"), (.alterSignature, "signature"), (.swapAssetHash, "signature"),
        (.anotherDevicesAnswer, "binding"), (.freeze, "freeze"),
    ]

    @Test(arguments: attacks)
    func theDeviceRefusesTheAttackAndKeepsItsCache(mode: HostileProxy.Mode, rule: String) throws {
        let world = try World("proxy-\(mode.rawValue)")
        if mode == .freeze { world.clock.offset.withLock { $0 += 3700 } }
        world.proxy.mode = mode
        let report = try world.device.sync(.session("workshop"))
        #expect(world.proxy.changed >= 1, "the proxy did change an answer")
        let item = try #require(report.items.first)
        #expect(item.outcome == .refused, "\(mode): \(report.json)")
        #expect(report.refusals.count == 1 && report.refusals[0].contains("(rule \(rule))"), "\(mode): \(report.refusals)")
        #expect(report.refusals.first?.contains("previous cache stays in use") == true)
        #expect(try world.device.cache.sessionManifest("workshop")?.bytes == world.v2, "the cache still holds deck v2")
        #expect(world.device.cache.check().isEmpty, "and every blob of it")
        print("hostile proxy: \(mode.rawValue) → \(report.refusals.first ?? "")")
        world.proxy.mode = .clean
        let after = try world.device.sync(.session("workshop"))
        #expect(after.refusals.isEmpty && after.items.first?.outcome != .refused, "a clean proxy lets the device on: \(after.refusals)")
    }

    /// The freeze case with nothing but signed times: the proxy keeps `GET /api/sync/time` from the device (404)
    /// and the device signs with the server's clock, so it never needs that route. The server's clock moves past
    /// the frozen answer's expiry; the key set, which the server signs anew at least every half TTL and the proxy
    /// lets through, carries the new time (its `iat`), and that alone finds the stale manifest out.
    @Test func aFrozenAnswerIsFoundOutThroughSignedTimesAlone() throws {
        let world = try World(deviceFollowsServerClock: true)
        world.proxy.time = .block
        world.clock.offset.withLock { $0 += 3700 }
        world.proxy.mode = .freeze
        let report = try world.device.sync(.session("workshop"))
        #expect(world.proxy.changed >= 1, "the proxy did serve a frozen answer")
        #expect(world.proxy.timeRequests == 0, "the device never asked the time")
        #expect(report.refusals.count == 1 && report.refusals[0].contains("(rule freeze)"), "\(report.refusals)")
        #expect(report.refusals.first?.contains("the latest server time this device has verified") == true)
        let verified = try world.device.answers.verifiedTime
        #expect(abs(Double(verified) - world.clock.now) < 5, "the key set's iat, signed after the clock moved: \(verified)")
        #expect(try world.device.cache.sessionManifest("workshop")?.bytes == world.v2 && world.device.cache.check().isEmpty)
        world.proxy.mode = .clean
        #expect(try world.device.sync(.session("workshop")).refusals.isEmpty)
    }

    /// A proxy (or a server clock that jumped ahead once) answering `GET /api/sync/time` ten years ahead. The
    /// device, made to read it by a `401 staleSignature` (its clock a quarter of an hour behind), signs with that
    /// time while the proxy is there and loses those requests; it records nothing of it, so once the proxy is
    /// gone it syncs and takes keys as before. The time route is unsigned and, by the contract, display-only: it
    /// never feeds the freeze rule. (Before, the sync read the time and kept the highest value it ever saw as the
    /// server time; every later answer was then refused as frozen, for good.)
    @Test func aProxyInflatingTheTimeNeverLocksTheDeviceOut() throws {
        let world = try World()
        let before = try world.device.answers
        world.proxy.time = .shift(10 * 365 * 86_400)
        let client = SyncClient(
            server: world.proxy.url, transport: world.device.transport, signer: world.device.client.signer, clock: DeviceClock(skew: -900))
        let syncer = Syncer(cache: world.device.cache, client: client)
        let attacked = Result { try syncer.sync(.session("workshop")) }
        print("time inflated by the proxy: \(attacked)")
        #expect(world.proxy.timeRequests >= 1, "the device did read the inflated time")
        let during = try world.device.answers
        #expect(during.verifiedTime >= before.verifiedTime && during.verifiedTime <= Int(world.clock.now) + 1, "nothing of the inflated time is kept")
        #expect(try world.device.cache.sessionManifest("workshop")?.bytes == world.v2 && world.device.cache.check().isEmpty)

        world.proxy.time = .pass
        let after = try syncer.sync(.session("workshop"))
        #expect(after.refusals.isEmpty && after.items.first?.outcome == .unchanged, "\(after.json)")
        try world.server.set("workshop", SessionUpdate(state: .live))
        try world.server.advance("workshop", to: 1)
        let keys = try ReleasedKeys.fetch(session: "workshop", client: client, answers: AnswerGuard(folder: world.device.folder, client: client))
        #expect(keys.slides == [0, 1])
        // The device that talks straight to the server now, with its own clock: the same.
        let direct = try world.device.sync(.session("workshop"))
        #expect(direct.refusals.isEmpty, "\(direct.refusals)")
        #expect(try world.device.answers.verifiedTime <= Int(world.clock.now) + 1)
    }

    /// "An offline device keeps using what it has" (issue 21): synced, the keys of slides 0–2 in hand, then the
    /// network gone for two days. Every released slide still opens from the cache, slide 3 still does not; a sync
    /// fails as a network error with the cache and answers.json untouched (nothing is gated on the device's clock,
    /// nothing expires on the device). Back online, the answers the server signs two days later are taken.
    @Test func anOfflineDeviceKeepsOpeningWhatItHas() throws {
        let world = try World()
        try world.server.set("workshop", SessionUpdate(state: .live))
        try world.server.advance("workshop", to: 2)
        let keys = try world.device.keys("workshop")
        #expect(keys.slides == [0, 1, 2])
        let answers = try world.device.answers
        world.proxy.stop()
        world.clock.offset.withLock { $0 += 2 * 86_400 }
        let offline = try #require(throws: DeviceError.self) { try world.device.sync(.session("workshop")) }
        #expect(offline.kind == .network, "\(offline)")
        #expect(throws: DeviceError.self) { try world.device.keys("workshop") }
        let manifest = try #require(try world.device.cache.sessionManifest("workshop"))
        for n in 0...2 {
            let plaintext = try keys.open(slide: n, of: manifest, cache: world.device.cache)
            #expect(plaintext.count > 0)
        }
        #expect { try keys.open(slide: 3, of: manifest, cache: world.device.cache) } throws: { ($0 as? DeviceError)?.kind == .notReleased }
        #expect(try world.device.answers == answers, "nothing recorded while offline")
        #expect(world.device.cache.check().isEmpty)

        let shared = world.clock
        let back = SyncClient(
            server: world.server.url, transport: world.device.transport, signer: world.device.client.signer,
            clock: DeviceClock(system: { shared.now }))
        let report = try Syncer(cache: world.device.cache, client: back).sync(.session("workshop"))
        #expect(report.refusals.isEmpty && report.items.first?.outcome != .refused, "\(report.json)")
        let fresh = try ReleasedKeys.fetch(session: "workshop", client: back, answers: AnswerGuard(folder: world.device.folder, client: back))
        #expect(fresh.slides == [0, 1, 2])
        #expect(try world.device.answers.verifiedTime > answers.verifiedTime + 86_400)
    }

    /// A residual risk, shown (docs/device.md, "What signed answers cannot do"): a box in front of the server at
    /// enrollment that answers 404 for the answer keys makes the device record that the server does not sign
    /// (trust on first use), and from then on a stripped signature passes unnoticed. With
    /// `requireSignedAnswers` (`enroll --require-signed-answers`) the enrollment is refused instead, before the
    /// device code is spent and with no key left behind; the same code then enrolls the device that is not as
    /// strict. Once a signed answer gets through, that device learns the keys and requires signatures again.
    @Test func answerKeysHiddenAtEnrollmentAreRefusedWhenSignedAnswersAreRequired() throws {
        let work = try TestFolder()
        let package = try SamplePackage.build(in: work.url)
        let server = try TestSyncServer(package: package)
        let proxy = try HostileProxy(upstream: server.port)
        defer { proxy.stop() }
        proxy.hidesAnswerKeys = true
        let code = try server.deviceCode(.session("workshop"))
        let strict = try TestFolder()
        let folder = try DeviceFolder.open(strict.path("device"), create: true)
        let transport = URLSessionTransport(timeout: 10)
        defer { transport.invalidate() }
        let refused = try #require(throws: DeviceError.self) {
            try Enrollment.enroll(
                server: proxy.url, token: code, folder: folder, name: "Strict", platform: "ios", transport: transport, requireSignedAnswers: true)
        }
        #expect(refused.message.contains("publishes no answer keys") && refused.message.contains("--require-signed-answers"), "\(refused)")
        #expect(!folder.isEnrolled && !FileManager.default.fileExists(atPath: folder.keyPath))

        let lenient = try TestDevice(proxy.url, token: code)
        #expect(try lenient.answers.signs == false, "recorded as a server that does not sign")
        proxy.mode = .stripSignature
        let stripped = try lenient.sync(.session("workshop"))
        #expect(stripped.refusals.isEmpty && stripped.items.first?.outcome == .new, "the risk: an unsigned answer is taken")
        proxy.mode = .clean
        proxy.hidesAnswerKeys = false
        #expect(try lenient.sync(.session("workshop")).refusals.isEmpty)
        #expect(try lenient.answers.signs == true, "a signed answer got through: the keys are learned, signatures required")
        proxy.mode = .stripSignature
        #expect(try lenient.sync(.session("workshop")).refusals.first?.contains("(rule signature)") == true)
    }

    /// A series device shown the series manifest of before an import: refused as rollback, and none of the
    /// old manifest's session refs is followed.
    @Test func anOlderSeriesManifestIsRefusedAndItsRefsAreNotFollowed() throws {
        let work = try TestFolder()
        let package = try SamplePackage.build(in: work.url)
        let server = try TestSyncServer(package: package)
        let proxy = try HostileProxy(upstream: server.port)
        defer { proxy.stop() }
        let device = try TestDevice(proxy.url, token: try server.deviceCode(.series("devconf-2026")))
        #expect(try device.sync(.series("devconf-2026")).refusals.isEmpty)
        try package.replaceWorkshopSlide(5)
        try package.rebuild()
        try server.importPackage(package)
        #expect(try device.sync(.series("devconf-2026")).refusals.isEmpty)
        let workshop = try #require(try device.cache.sessionManifest("workshop")).bytes
        proxy.mode = .replayOlder
        let report = try device.sync(.series("devconf-2026"))
        #expect(report.items.count == 1 && report.items[0].kind == "series" && report.items[0].outcome == .refused, "\(report.json)")
        #expect(report.refusals.first?.contains("GET /api/sync/series/devconf-2026/manifest (rule rollback)") == true, "\(report.refusals)")
        #expect(try device.cache.sessionManifest("workshop")?.bytes == workshop && device.cache.check().isEmpty)
    }

    /// The keys of the deck before an import, replayed after the device took the new deck's: refused.
    @Test func olderKeysAreRefused() throws {
        let work = try TestFolder()
        let package = try SamplePackage.build(in: work.url)
        let server = try TestSyncServer(package: package)
        let proxy = try HostileProxy(upstream: server.port)
        defer { proxy.stop() }
        let device = try TestDevice(proxy.url, token: try server.deviceCode(.session("workshop")))
        _ = try device.sync(.session("workshop"))
        try server.set("workshop", SessionUpdate(state: .live))
        #expect(try device.keys("workshop").deckVersion == 1)
        try package.replaceWorkshopSlide(5)
        try package.rebuild()
        try server.importPackage(package)
        _ = try device.sync(.session("workshop"))
        #expect(try device.keys("workshop").deckVersion == 2)
        proxy.mode = .replayOlder
        #expect { try device.keys("workshop") } throws: { error in
            let refused = error as? DeviceError
            return refused?.kind == .integrity && refused?.message.hasPrefix("refused GET /api/sync/keys?session=workshop (rule rollback): ") == true
        }
    }

    /// `pulse-device sync` behind the proxy: exit 1, one error line naming the rule, the JSON report says refused.
    @Test func theCommandLineExitsOneWithTheRule() throws {
        let world = try World()
        world.proxy.mode = .stripSignature
        let lines = LinesBox()
        let console = Console(out: { lines.out($0) }, err: { lines.err($0) })
        let code = DeviceCommand.main(["sync", "--device-dir", world.device.folder.path, "--json"], console: console)
        #expect(code == 1)
        #expect(lines.errors.count == 1 && lines.errors[0].hasPrefix("pulse-device: error: refused GET /api/sync/manifest?session=workshop (rule signature): "),
            "\(lines.errors)")
        let report = try JSONValue.parse(Array((lines.output.last ?? "").utf8))
        #expect(report["manifests"]?.arrayValue?.first?["outcome"]?.stringValue == "refused" && report["refused"]?.arrayValue?.count == 1)
        world.proxy.mode = .clean
        #expect(DeviceCommand.main(["sync", "--device-dir", world.device.folder.path], console: console) == 0)
    }

    @Test func aCleanProxyChangesNothing() throws {
        let world = try World()
        let direct = try TestDevice(world.server.url, token: try world.server.deviceCode(.session("workshop")))
        _ = try direct.sync(.session("workshop"))
        #expect(try direct.cache.sessionManifest("workshop")?.bytes == world.v2, "the same manifest through the proxy and without")
        let again = try world.device.sync(.session("workshop"))
        #expect(again.refusals.isEmpty && again.items.first?.outcome == .unchanged && again.blobsFetched == 0)
        #expect(world.proxy.changed == 0)
        #expect(world.v1 != world.v2)
        let state = try AnswerState.read(world.device.folder.answersURL)
        let seq = try #require(state.answers["/api/sync/manifest?session=workshop"]?.seq)
        #expect(state.signs == true && seq > 0)
    }
}

/// The server's clock in a test: the real one plus an offset the test moves.
final class ServerClock: Sendable {
    let offset = Mutex<Double>(0)
    var now: Double { Date().timeIntervalSince1970 + offset.withLock { $0 } }
}

final class LinesBox: Sendable {
    private let lines = Mutex<(out: [String], err: [String])>(([], []))
    func out(_ line: String) { lines.withLock { $0.out.append(line) } }
    func err(_ line: String) { lines.withLock { $0.err.append(line) } }
    var output: [String] { lines.withLock { $0.out } }
    var errors: [String] { lines.withLock { $0.err } }
}
