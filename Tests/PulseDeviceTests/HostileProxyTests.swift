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

        init(_ name: String = #function) throws {
            work = try TestFolder(name)
            package = try SamplePackage.build(in: work.url)
            let shared = self.clock
            let clock: @Sendable () -> Double = { shared.now }
            server = try TestSyncServer(package: package, name, clock: clock)
            proxy = try HostileProxy(upstream: server.port)
            device = try TestDevice(proxy.url, token: try server.deviceCode(.session("workshop")), name: name + "A")
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
