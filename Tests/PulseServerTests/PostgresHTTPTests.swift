import Foundation
import PulseCore
import PulseCrypto
import PulsePostgres
import PulsePostgresTesting
import Testing
@testable import PulseServer

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
        _ = try fetch()  // warms the caches (and prepares the statements)
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
        #expect(harness.alarms.err.contains { $0.contains("database unavailable") })
        #expect(!harness.alarms.err.joined().contains(cluster.applicationPassword))

        try cluster.start()
        let back = try harness.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: harness.clock.seconds)
        #expect(back.status == 200)
        #expect(try KeysReleaseWalkTests.released(back).map(\.n) == [0, 1, 2])
    }
}
