import Foundation
import PulseCore
import PulseCrypto
import PulsePostgres
import PulsePostgresTesting
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseServerCLI
import PulseCommandLine

/// The HTTP half on PostgreSQL: two server instances in this process (each its own responder, caches,
/// event hub, pool and listener) on one database, and what a client sees when the database goes away.
/// The same checks with separate processes behind nginx, under load and faults, are part 2.
@Suite struct PostgresHTTPTests {
    /// Two instances of the server on one new database, sharing a clock.
    static func twoInstances(_ name: String = #function) throws -> (SyncHarness, SyncHarness) {
        let database = try PostgresCluster.shared().createDatabase(String(name.prefix(12)))
        let clock = TestClock()
        let a = try SyncHarness(name + "-a", clock: clock, storage: { try PostgresStorage(configuration: database.configuration) })
        let b = try SyncHarness(name + "-b", clock: clock, storage: { try PostgresStorage(configuration: database.configuration) })
        return (a, b)
    }

    @Test func whatOneInstanceChangesIsWhatTheOtherServesNext() throws {
        let (a, b) = try Self.twoInstances()
        try a.seed(["talk"], state: .live)
        let code = try a.code(.session("talk"))
        let device = try a.enroll(code)
        // The code is spent for every instance.
        let again = try b.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: try P256.PrivateKey()))
        #expect(again.status == 404)

        let staff = try a.staffToken()
        let advance = try a.client().request(
            "POST", "/api/staff/sessions/talk/advance", [("Authorization", "Bearer \(staff)")], body: Array(#"{"maxShown":3}"#.utf8))
        #expect(advance.status == 200, "\(advance.text)")
        // B's caches are warm from nothing here, so settle its listener first: what is asserted is the
        // value served, not the notification's latency (PostgresStorageTests measures that).
        try (b.storage as! PostgresStorage).synchronize()
        let keys = try b.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: b.clock.seconds)
        #expect(keys.status == 200)
        #expect(try KeysReleaseWalkTests.released(keys).map(\.n) == [0, 1, 2, 3])

        // Warm caches on B, then a change through A: B serves the new state once the notification is in.
        _ = try a.client().request("POST", "/api/staff/sessions/talk", [("Authorization", "Bearer \(staff)")], body: Array(#"{"state":"ended"}"#.utf8))
        try (b.storage as! PostgresStorage).synchronize()
        let ended = try b.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: b.clock.seconds)
        #expect(try KeysReleaseWalkTests.released(ended).map(\.n) == [0, 1, 2, 3])  // ended without allowDownload: as live
        _ = try a.client().request("POST", "/api/staff/sessions/talk", [("Authorization", "Bearer \(staff)")], body: Array(#"{"allowDownload":true}"#.utf8))
        try (b.storage as! PostgresStorage).synchronize()
        let download = try b.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: b.clock.seconds)
        #expect(try KeysReleaseWalkTests.released(download).count == 10)
    }

    @Test func anAdvanceThroughOneInstanceReachesAStreamHeldByTheOtherWithinASecond() throws {
        let (a, b) = try Self.twoInstances()
        try a.seed(["talk"], state: .live)
        let device = try a.enroll(try a.code(.session("talk")))
        let stream = try EventReader(b, device: device, session: "talk")
        _ = try stream.next(2)  // the snapshot: state and manifest
        let staff = try a.staffToken()
        let started = Date()
        let advance = try a.client().request(
            "POST", "/api/staff/sessions/talk/advance", [("Authorization", "Bearer \(staff)")], body: Array(#"{"maxShown":4}"#.utf8))
        #expect(advance.status == 200)
        let events = try stream.next()
        #expect(events.map(\.name) == ["advance"] && events.first?.data == ["maxShown": 4, "deckVersion": 1])
        #expect(Date().timeIntervalSince(started) < 1)
    }

    /// An instance serves what the database holds even before the notification of another instance's change
    /// reached it: the request's rate-token round trip reads the device's status and the session's change
    /// sequence too, and a cache found behind catches up first. B's listener is held inside an observer while
    /// A advances and revokes; B already serves the new frontier and refuses the revoked device.
    @Test func anInstanceWhoseNotificationIsLateStillServesWhatTheDatabaseHolds() throws {
        let (a, b) = try Self.twoInstances()
        try a.seed(["talk"], state: .live)
        _ = try a.storage.advance(sessionId: "talk", to: 1, at: a.clock.seconds)
        let device = try a.enroll(try a.code(.session("talk")))
        let other = try a.enroll(try a.code(.session("talk")))
        try (b.storage as! PostgresStorage).synchronize()
        for someone in [device, other] {  // B's caches hold both devices and the session
            let keys = try b.client().signed("GET", "/api/sync/keys?session=talk", by: someone, at: b.clock.seconds)
            #expect(try KeysReleaseWalkTests.released(keys).map(\.n) == [0, 1])
        }

        let held = Gate()
        b.storage.observeChanges { _ in held.pass() }
        held.close()
        _ = try a.code(.session("talk"))  // a notification B's listener now stops on
        #expect(held.waitUntilSomeoneWaits(seconds: 5))
        let staff = try a.staffToken()
        let auth = [("Authorization", "Bearer \(staff)")]
        #expect(try a.client().request("POST", "/api/staff/sessions/talk/advance", auth, body: Array(#"{"maxShown":4}"#.utf8)).status == 200)
        #expect(try a.client().request("POST", "/api/staff/devices/\(other.id)/revoke", auth).status == 200)

        let keys = try b.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: b.clock.seconds)
        #expect(try KeysReleaseWalkTests.released(keys).map(\.n) == [0, 1, 2, 3, 4])
        let revoked = try b.client().signed("GET", "/api/sync/keys?session=talk", by: other, at: b.clock.seconds)
        #expect(revoked.status == 404)
        held.open()
    }

    /// The hub of the instance holding the stream wakes on the notification itself: with its polling slowed
    /// to once a minute, twenty advances made through the other instance each reach the stream at once.
    @Test func anotherInstancesAdvanceWakesTheHubWithoutWaitingForItsPoll() throws {
        let database = try PostgresCluster.shared().createDatabase("wake")
        let clock = TestClock()
        let a = try SyncHarness(#function + "-a", clock: clock, storage: { try PostgresStorage(configuration: database.configuration) })
        let b = try SyncHarness(
            #function + "-b", clock: clock, configure: { $0.eventPollSeconds = 60 },
            storage: { try PostgresStorage(configuration: database.configuration) })
        try a.seed(["talk"], slides: 30, state: .live)
        let device = try a.enroll(try a.code(.session("talk")))
        let stream = try EventReader(b, device: device, session: "talk")
        _ = try stream.next(2)  // the snapshot: state and manifest
        let staff = try a.staffToken()
        let client = try a.client()
        var latencies: [Double] = []
        for slide in 1...20 {
            let started = Date()
            let advance = try client.request(
                "POST", "/api/staff/sessions/talk/advance", [("Authorization", "Bearer \(staff)")], body: Array("{\"maxShown\":\(slide)}".utf8))
            #expect(advance.status == 200)
            let events = try stream.next()
            latencies.append(Date().timeIntervalSince(started))
            #expect(events.first?.data == ["maxShown": .int(slide), "deckVersion": 1])
        }
        let sorted = latencies.sorted()
        print("advance through A to B's stream, 20 advances: p50 \(Int(sorted[9] * 1000)) ms, max \(Int(sorted[19] * 1000)) ms")
        #expect(sorted[19] < 1)
    }

    @Test func aDeviceMeetsOneRateLimitAcrossInstancesAndAReplayIsRefusedByTheOther() throws {
        let (a, b) = try Self.twoInstances()
        try a.seed(["talk"], state: .live)
        let device = try a.enroll(try a.code(.session("talk")))
        let clients = [try a.client(), try b.client()]
        let now = a.clock.seconds
        // The device limit (5/s, bursts of 10) spread over both instances: 10 pass, the 11th is refused.
        var statuses: [Int] = []
        for n in 0..<11 { statuses.append(try clients[n % 2].signed("GET", "/api/sync/keys?session=talk", by: device, at: now).status) }
        #expect(statuses == Array(repeating: 200, count: 10) + [429])

        a.clock.advance(by: 1)  // refill
        let body = DiagAndStaffTests.sample(["build": "2.4.1", "platform": "ios", "online": true])
        let header = try device.header("POST", "/api/sessions/talk/diag", body: body, at: a.clock.seconds)
        let first = try clients[0].request("POST", "/api/sessions/talk/diag", [("X-Pulse-Device", header)], body: body)
        #expect(first.status == 204)
        let replay = try clients[1].request("POST", "/api/sessions/talk/diag", [("X-Pulse-Device", header)], body: body)
        #expect(replay.status == 404 && replay.text == #"{"error":"notFound"}"#)
        #expect(try a.storage.samples(sessionId: "talk").count == 1)
    }

    /// Database round trips per signed key fetch, counted by the instance's pool: with warm caches one
    /// (the device's rate limit, shared by every instance); after an advance one more per thing reloaded.
    @Test func aSignedKeyFetchCostsOneRoundTrip() throws {
        let database = try PostgresCluster.shared().createDatabase("roundtrips")
        let harness = try SyncHarness(
            configure: { $0.deviceLimit = RateLimit(rate: 1000, burst: 1000) },
            storage: { try PostgresStorage(configuration: database.configuration) })
        try harness.seed(["talk"], state: .live)
        _ = try harness.storage.advance(sessionId: "talk", to: 4, at: harness.clock.seconds)
        let device = try harness.enroll(try harness.code(.session("talk")))
        let storage = harness.storage as! PostgresStorage
        let client = try harness.client()
        func fetch() throws -> Int {
            let before = storage.roundTrips
            let response = try client.signed("GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds)
            #expect(response.status == 200)
            return storage.roundTrips - before
        }
        // The enrollment's change notice may still be on its way: once it is in, it cannot reload a cache
        // in the middle of the warm fetches (seen once: 3 round trips on the first).
        try storage.synchronize()
        _ = try fetch()  // warms the caches (and prepares the statements)
        // The count is the pool's, and the event hub's watcher uses the pool too: on its next tick (0.1 s) it
        // looks for revoked devices, as the enrollment moved the devices' generation (seen once: 2 round trips
        // on the first warm fetch). Let it settle: no round trip for half a second.
        #expect(eventually(within: 10) {
            let before = storage.roundTrips
            usleep(500_000)
            return storage.roundTrips == before
        })
        let warm = try (0..<20).map { _ in try fetch() }
        #expect(warm == Array(repeating: 1, count: 20))
        _ = try harness.storage.advance(sessionId: "talk", to: 6, at: harness.clock.seconds)
        try storage.synchronize()
        let afterAdvance = try fetch()
        let againWarm = try fetch()
        print("round trips per signed key fetch: warm \(warm[0]), first after an advance \(afterAdvance), then \(againWarm)")
        #expect(againWarm == 1)
    }

    @Test func whileTheDatabaseIsAwayAnswersAre503WithRetryAfterAndNeverAKey() throws {
        let cluster = try PostgresCluster()  // its own: stopping the shared one would fail other tests
        defer { cluster.destroy() }
        let database = try cluster.createDatabase()
        let harness = try SyncHarness(storage: { try PostgresStorage(configuration: database.configuration) })
        try harness.seed(["talk"], state: .live)
        _ = try harness.storage.advance(sessionId: "talk", to: 2, at: harness.clock.seconds)
        let device = try harness.enroll(try harness.code(.session("talk")))
        let client = try harness.client()
        #expect(try client.signed("GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds).status == 200)

        try cluster.stop()
        harness.clock.advance(by: 1)
        for _ in 0..<3 {
            let keys = try harness.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds)
            #expect(keys.status == 503 && keys.header("retry-after") == "1" && keys.json == ["error": "unavailable"], "\(keys.text)")
        }
        let enroll = try harness.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: "ABCD-EFGH-JKMN", key: try P256.PrivateKey()))
        #expect(enroll.status == 503)
        #expect(try harness.client().request("GET", "/healthz").status == 503)
        #expect(try harness.client().request("GET", "/readyz").status == 503, "not ready while the database is away")
        #expect(try harness.client().request("GET", "/livez").status == 200, "but alive: no restart would help")
        #expect(harness.alarms.err.contains { $0.contains("database unavailable") })
        #expect(!harness.alarms.err.joined().contains(cluster.applicationPassword))

        try cluster.start()
        let back = try harness.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds)
        #expect(back.status == 200)
        #expect(try KeysReleaseWalkTests.released(back).map(\.n) == [0, 1, 2])
    }

    /// The real executable: two `serve` processes started together on an empty database (the schema is
    /// made once), sharing the device certificate key; an enroll through one, an advance from the admin
    /// CLI, the keys through the other; the password in no line either prints.
    @Test func twoServeProcessesStartedTogetherShareOneDatabase() throws {
        let database = try PostgresCluster.shared().createDatabase("serve")
        let folder = try TestFolder()
        let dataA = try DataFolder.prepare(folder.url.appendingPathComponent("a").path)
        let dataB = try DataFolder.prepare(folder.url.appendingPathComponent("b").path)
        _ = try DeviceCertificateKey.loadOrCreate(in: dataA)
        try FileManager.default.copyItem(atPath: dataA.certificateKeyPath, toPath: dataB.certificateKeyPath)
        let environment = [ServerCommand.databaseVariable: database.url]
        let servers = Servers()
        DispatchQueue.concurrentPerform(iterations: 2) { n in
            servers.set(n, Result { try ServerProcess(data: [dataA, dataB][n].url.path, ["--access-log", "off"], environment: environment) })
        }
        let a = try servers.get(0), b = try servers.get(1)
        #expect(a.errorLines.first { $0.contains("serving on") }?.contains("database postgresql://pulse_app:***@127.0.0.1") == true, "\(a.errorLines)")
        let versions = try PostgresConnection(database.configuration).query("SELECT version FROM schema_version").rows.map { try $0.int(0) }
        #expect(versions == Array(1...PostgresStorage.migrations.count))

        let package = try TestPackage(packageId: TestContent.packageAID)
        try package.addSession("talk")
        try package.commit()
        #expect(PostgresCommandTests.run(["import", package.root.path], environment: environment).code == 0)
        #expect(PostgresCommandTests.run(["admin", "session", "set", "talk", "--state", "live"], environment: environment).code == 0)
        let code = try #require(PostgresCommandTests.run(["admin", "device-code", "create", "--session", "talk"], environment: environment).out.first)
        let key = try P256.PrivateKey()
        let enrolled = try a.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: key))
        #expect(enrolled.status == 200, "\(enrolled.text)")
        let device = TestDevice(id: try #require(enrolled.json?["deviceId"]?.stringValue), key: key)
        #expect(PostgresCommandTests.run(["admin", "session", "advance", "talk", "--to", "2"], environment: environment).code == 0)
        let now = Int64(Date().timeIntervalSince1970)
        let keys = try b.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: now)
        #expect(keys.status == 200, "\(keys.text)")
        #expect(try KeysReleaseWalkTests.released(keys).map(\.n) == [0, 1, 2])
        // The certificate from A verifies with the key B publishes.
        let published = try b.client().request("GET", "/api/sync/device-cert-keys")
        #expect(published.json == (try a.client().request("GET", "/api/sync/device-cert-keys").json))
        for server in [a, b] {
            server.signal(SIGTERM)
            #expect(server.waitForExit(within: 15) == 0)
            #expect(!server.errorLines.joined().contains(database.cluster.applicationPassword))
        }
    }
}

final class Servers: @unchecked Sendable {
    private let lock = NSLock()
    private var started: [Int: Result<ServerProcess, any Error>] = [:]
    func set(_ n: Int, _ result: Result<ServerProcess, any Error>) { lock.withLock { started[n] = result } }
    func get(_ n: Int) throws -> ServerProcess { try lock.withLock { started[n]! }.get() }
}

/// Holds whoever calls `pass()` while closed, until `open()`.
final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var closed = false
    private var waiting = 0

    func close() { condition.withLock { closed = true } }

    func open() {
        condition.withLock {
            closed = false
            condition.broadcast()
        }
    }

    func pass() {
        condition.withLock {
            waiting += 1
            condition.broadcast()
            while closed { condition.wait() }
            waiting -= 1
        }
    }

    /// True once a caller of `pass()` is held.
    func waitUntilSomeoneWaits(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        return condition.withLock {
            while waiting == 0 { if !condition.wait(until: deadline) { return waiting > 0 } }
            return true
        }
    }
}
