import Foundation
import PulseCrypto
import PulsePostgres
import PulsePostgresTesting
import PulseServer
import PulseTestSupport
import SyncTestSupport
import PulseServerStorage
import Testing

/// What only the PostgreSQL backend has: instances that learn of each other's changes through NOTIFY,
/// migrations shared by concurrent starts, a server that goes away and comes back, its schema's guards.
@Suite struct PostgresStorageTests {
    static func database(_ name: String = #function) throws -> TestDatabase {
        try PostgresCluster.shared().createDatabase(String(name.prefix(12)))
    }

    @Test func anotherInstancesChangeReachesGenerationWithinASecondWithoutAsking() throws {
        let database = try Self.database()
        let a = try PostgresStorage(configuration: database.configuration)
        let b = try PostgresStorage(configuration: database.configuration)
        try TestContent.seed(a, "talk", state: .live)
        try b.synchronize()
        let before = try b.generation()
        let roundTrips = b.roundTrips
        _ = try a.advance(sessionId: "talk", to: 3, at: 1100)
        // No synchronize(), no polling of the database: only b's listener can move it.
        try waitUntil("b's generation moves", seconds: 1) { try b.generation() != before }
        #expect(b.roundTrips == roundTrips)
        #expect(try b.session(id: "talk")?.maxShown == 3)

        // How long after a's commit returns: spin on b's generation (an atomic load) for 20 advances.
        _ = try a.importContent(TestContent.plan([TestContent.session("long", slides: 100)]), options: ImportOptions(), at: 1000)
        _ = try a.updateSession(id: "long", SessionUpdate(state: .live), at: 1000)
        try b.synchronize()
        var delays: [Double] = []
        for slide in 1...20 {
            let before = try b.generation()
            _ = try a.advance(sessionId: "long", to: slide, at: 1100)
            let start = DispatchTime.now().uptimeNanoseconds
            while try b.generation() == before {
                guard DispatchTime.now().uptimeNanoseconds - start < 1_000_000_000 else { break }
                sched_yield()
            }
            delays.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            try b.synchronize()
        }
        delays.sort()
        print("NOTIFY reached the other instance after: median \(delays[delays.count / 2]) ms, slowest \(delays.last!) ms")
        #expect(delays.last! < 1000)
    }

    @Test func withoutItsListeningConnectionGenerationNeverRepeatsAndAReconnectMovesIt() throws {
        let database = try Self.database()
        let storage = try PostgresStorage(configuration: database.configuration)
        let stable = try storage.generation()
        #expect(try storage.generation() == stable)
        let admin = try PostgresConnection(try database.cluster.superuser())
        let ended = try admin.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'pulse-server listener'",
            [.text(database.name)])
        #expect(ended.rows.count == 1)
        // Once it noticed, and until it listens again, nothing may be served from a cache: every call
        // is a new value (or it already reconnected, and the reconnect moved it).
        try waitUntil("the listener notices", seconds: 5) { try storage.generation() != stable }
        try storage.synchronize(timeout: 10)  // returns once it listens again
        let afterReconnect = try storage.generation()
        #expect(afterReconnect != stable)
        #expect(try storage.generation() == afterReconnect)
    }

    @Test func concurrentFirstStartsOnEveryOlderSchemaMigrateOnce() throws {
        for version in 0..<PostgresStorage.migrations.count {
            let database = try Self.database()
            if version > 0 {
                try PostgresConnection(database.configuration).migrate(Array(PostgresStorage.migrations.prefix(version)), lockKey: 1)
            }
            let failures = Counter()
            let storages = Storages()
            DispatchQueue.concurrentPerform(iterations: 6) { _ in
                do { storages.add(try PostgresStorage(configuration: database.configuration, connections: 1)) } catch { failures.add() }
            }
            #expect(failures.value == 0)
            let db = try PostgresConnection(database.configuration)
            let applied = try db.query("SELECT version FROM schema_version ORDER BY version").rows.map { try $0.int(0) }
            #expect(applied == Array(1...PostgresStorage.migrations.count), "from version \(version)")
            withExtendedLifetime(storages) {}
        }
    }

    /// Six instances starting together on an empty database make one device certificate key; one adopting its
    /// data folder's key adds it after that one (the oldest signs), and adopting it again changes nothing.
    @Test func instancesStartingTogetherMakeOneCertificateKeyAndAdoptOthers() throws {
        let database = try Self.database()
        let kids = Lines()
        let failures = Counter()
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            do {
                let storage = try PostgresStorage(configuration: database.configuration, connections: 1, watchChanges: false)
                kids.add(out: try storage.prepareCertificateKeys(adopting: nil, at: 1000).map(\.keyId).joined(separator: ","))
            } catch { failures.add() }
        }
        #expect(failures.value == 0 && Set(kids.out).count == 1 && !kids.out[0].contains(","), "\(kids.out)")
        let storage = try PostgresStorage(configuration: database.configuration, connections: 1, watchChanges: false)
        let folder = try TestFolder()
        let boxKey = try DeviceCertificateKey.loadOrCreate(in: try DataFolder.prepare(folder.url.appendingPathComponent("data").path))
        #expect(try storage.prepareCertificateKeys(adopting: boxKey, at: 2000).map(\.keyId) == [kids.out[0], boxKey.keyId])
        #expect(try storage.prepareCertificateKeys(adopting: boxKey, at: 3000).map(\.keyId) == [kids.out[0], boxKey.keyId])
        // Stored as the data folder keeps it (PKCS#8 PEM), and nowhere in plain sight of a message.
        let stored = try PostgresConnection(database.configuration).query("SELECT private_key FROM certificate_keys WHERE kid = $1", [.text(boxKey.keyId)])
        #expect(String(decoding: try #require(stored.first).bytes(0), as: UTF8.self).hasPrefix("-----BEGIN PRIVATE KEY-----"))
    }

    @Test func aDatabaseWithANewerSchemaIsRefused() throws {
        let database = try Self.database()
        _ = try PostgresStorage(configuration: database.configuration, watchChanges: false)
        _ = try PostgresConnection(database.configuration).query("INSERT INTO schema_version (version) VALUES ($1)", [.int(PostgresStorage.migrations.count + 1)])
        let error = #expect(throws: ServerError.self) { try PostgresStorage(configuration: database.configuration) }
        #expect(error?.kind == .storage && error?.message.contains("newer than this program knows") == true)
    }

    @Test func aRoleThatOnlyReadsAndWritesRowsRunsASchemaItsOwnerCreated() throws {
        let database = try Self.database()
        _ = try PostgresStorage(configuration: database.configuration, watchChanges: false)  // the owner migrates
        let role = "pulse_rows_\(UUID().uuidString.prefix(8).lowercased())"
        let admin = try PostgresConnection(try database.cluster.superuser(database: database.name))
        try admin.execute("""
            CREATE ROLE \(role) LOGIN PASSWORD 'rows-only-password';
            GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO \(role);
            GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO \(role);
            REVOKE CREATE ON SCHEMA public FROM PUBLIC;
            """)
        let configuration = database.configuration.setting("user", role).setting("password", "rows-only-password")
        let storage = try PostgresStorage(configuration: configuration)
        try TestContent.seed(storage, "talk", state: .live)
        let device = try #require(try storage.enroll(credentialHash: try StorageSuiteEnrollTests.code(storage), device: StorageSuiteEnrollTests.device(1), at: 1000))
        let sample = DiagSample(sessionId: "talk", deviceId: device.id, receivedAt: 1000, build: "1", platform: "ios", connection: [:])
        #expect(try storage.recordSignedRequest(replayKey: [1], expiresAt: 2000, sample: sample, at: 1000))
        #expect(try storage.advance(sessionId: "talk", to: 2, at: 1001) != .noSuchSession)
        // It cannot change the schema.
        let ddl = #expect(throws: PostgresError.self) { try PostgresConnection(configuration).execute("CREATE TABLE t (a int)") }
        #expect(ddl?.sqlState == "42501")
    }

    @Test func theSchemaRefusesStatesTheServerMustNeverBeIn() throws {
        let database = try Self.database()
        let storage = try PostgresStorage(configuration: database.configuration, watchChanges: false)
        try TestContent.seed(storage, "talk")
        try storage.addCredential(NewCredential(hash: [1], kind: .deviceCode, scope: .session("talk"), createdAt: 1))
        try storage.addCredential(NewCredential(hash: [2], kind: .registrationToken, scope: .series("s"), maxDevices: 2, createdAt: 1))
        let db = try PostgresConnection(database.configuration)
        for statement in [
            "UPDATE credentials SET devices_enrolled = 2 WHERE hash = '\\x01'",
            "UPDATE credentials SET devices_enrolled = 3 WHERE hash = '\\x02'",
            "UPDATE credentials SET scope_kind = NULL, scope_id = NULL WHERE hash = '\\x01'",
            "UPDATE sessions SET max_shown = -1",
            "UPDATE sessions SET state = 'paused'",
            "INSERT INTO devices (id, public_key, platform, name, scope_kind, scope_id, credential_hash, enrolled_at) VALUES ('d', '\\x00', 'ios', 'n', 'session', 'talk', '\\x09', 1)",
        ] {
            let error = #expect(throws: PostgresError.self, "\(statement)") { try db.execute(statement) }
            #expect(error?.kind == .constraintViolation, "\(statement)")
        }
    }

    @Test func anUnreadableVenueNetworkIsAnErrorNotAnUnlockedSession() throws {
        let database = try Self.database()
        let storage = try PostgresStorage(configuration: database.configuration, watchChanges: false)
        try TestContent.seed(storage, "talk")
        try PostgresConnection(database.configuration).execute("INSERT INTO venue_networks (session_id, network) VALUES ('talk', 'garbage')")
        let error = #expect(throws: ServerError.self) { try storage.session(id: "talk") }
        #expect(error?.kind == .storage)
    }

    /// A session's package id is parsed where it leaves the database, as the key tables' and series' are: one
    /// changed by hand is a storage error naming the session.
    @Test func anUnreadablePackageIdOfASessionIsAStorageError() throws {
        let database = try Self.database()
        let storage = try PostgresStorage(configuration: database.configuration, watchChanges: false)
        try TestContent.seed(storage, "talk")
        #expect(try storage.session(id: "talk")?.packageId == TestContent.packageAID)
        try PostgresConnection(database.configuration).execute("UPDATE sessions SET package_id = 'not-a-package'")
        let error = #expect(throws: ServerError.self) { try storage.session(id: "talk") }
        #expect(error?.kind == .storage && error?.message == "session talk has an unreadable package id in the database")
        #expect(throws: ServerError.self) { try storage.sessions() }
    }

    @Test func fiftyEnrollsWithOneCodeOverThreeInstancesMakeOneDevice() throws {
        let database = try Self.database()
        let instances = try (0..<3).map { _ in try PostgresStorage(configuration: database.configuration, connections: 8) }
        try TestContent.seed(instances[0], "talk")
        let code = try StorageSuiteEnrollTests.code(instances[0])
        let token = SHA256.hash(Array("capped".utf8))
        try instances[0].addCredential(NewCredential(hash: token, kind: .registrationToken, scope: .series("conf"), maxDevices: 7, createdAt: 1000))
        let winners = Counter(), capped = Counter(), failures = Counter()
        DispatchQueue.concurrentPerform(iterations: 100) { n in
            do {
                let storage = instances[n % 3]
                if n < 50 {
                    if try storage.enroll(credentialHash: code, device: StorageSuiteEnrollTests.device(n), at: 1100) != nil { winners.add() }
                } else if try storage.enroll(credentialHash: token, device: StorageSuiteEnrollTests.device(n), at: 1100) != nil {
                    capped.add()
                }
            } catch { failures.add() }
        }
        #expect(failures.value == 0 && winners.value == 1 && capped.value == 7)
        #expect(try instances[1].devices().count == 8)
    }

    @Test func aServerThatGoesAwayIsUnavailableAndTheSameStorageWorksWhenItIsBack() throws {
        let cluster = try PostgresCluster()  // its own: stopping the shared one would fail other tests
        defer { cluster.destroy() }
        let database = try cluster.createDatabase()
        let storage = try PostgresStorage(configuration: database.configuration)
        try TestContent.seed(storage, "talk", state: .live)
        let before = try storage.generation()

        try cluster.stop()
        let error = #expect(throws: ServerError.self) { try storage.session(id: "talk") }
        #expect(error?.kind == .unavailable && error?.httpStatus == 503)
        #expect(error?.message.contains(cluster.applicationPassword) == false)
        let write = #expect(throws: ServerError.self) { try storage.advance(sessionId: "talk", to: 2, at: 1100) }
        #expect(write?.kind == .unavailable)
        try waitUntil("the listener notices") { try storage.generation() != storage.generation() }
        #expect(try storage.generation() != before)

        try cluster.start()
        #expect(try storage.session(id: "talk")?.state == .live)
        guard case .advanced(let record, moved: true) = try storage.advance(sessionId: "talk", to: 2, at: 1101) else {
            Issue.record("the advance after the restart did not move")
            return
        }
        #expect(record.maxShown == 2)
        try storage.synchronize(timeout: 10)
        let settled = try storage.generation()
        #expect(try storage.generation() == settled)
    }

    /// Database round trips of each storage call, after its statements were prepared on the connection
    /// (the first call of a statement on a connection costs one more). Printed for docs/server.md.
    @Test func roundTripsPerCall() throws {
        let database = try Self.database()
        let storage = try PostgresStorage(configuration: database.configuration, connections: 1)
        try TestContent.seed(storage, "talk", state: .live)
        let device = try #require(try storage.enroll(credentialHash: try StorageSuiteEnrollTests.code(storage), device: StorageSuiteEnrollTests.device(0), at: 1000))
        var key: UInt8 = 0
        let codes = try (0..<200).map { _ in try StorageSuiteEnrollTests.code(storage) }
        let calls: [(String, () throws -> Void)] = [
            ("generation", { _ = try storage.generation() }),
            ("device", { _ = try storage.device(id: device.id) }),
            ("session", { _ = try storage.session(id: "talk") }),
            ("keyTable", { _ = try storage.keyTable(sessionId: "talk", deckVersion: 1) }),
            ("sessionContent", { _ = try storage.sessionContent(id: "talk") }),
            ("series", { _ = try storage.series(id: "conf") }),
            ("isStaffToken", { _ = try storage.isStaffToken(hash: [1], at: 1000) }),
            ("changes", { _ = try storage.changes(sessionId: "talk", after: 0, limit: 10) }),
            ("recordSignedRequest", {
                key &+= 1
                _ = try storage.recordSignedRequest(replayKey: [key, 1], expiresAt: 2000, sample: nil, at: 1000)
            }),
            ("recordSignedRequest+sample", {
                key &+= 1
                let sample = DiagSample(sessionId: "talk", deviceId: device.id, receivedAt: 1000, build: "1", platform: "ios", connection: [:])
                _ = try storage.recordSignedRequest(replayKey: [key, 2], expiresAt: 2000, sample: sample, at: 1000)
            }),
            ("enroll", {
                key &+= 1
                _ = try storage.enroll(credentialHash: codes[Int(key) % codes.count], device: StorageSuiteEnrollTests.device(Int(key) + 100), at: 1000)
            }),
            ("addCredential", { _ = try StorageSuiteEnrollTests.code(storage) }),
            ("advance (moves)", { key &+= 1; _ = try storage.advance(sessionId: "talk", to: Int(key % 9) + 1, at: 1000) }),
            ("advance (behind)", { _ = try storage.advance(sessionId: "talk", to: 0, at: 1000) }),
            ("updateSession (state)", { _ = try storage.updateSession(id: "talk", SessionUpdate(state: key % 2 == 0 ? .live : .ended), at: 1000); key &+= 1 }),
            ("importContent (unchanged)", { _ = try storage.importContent(TestContent.plan([TestContent.session("talk")]), options: ImportOptions(), at: 1000) }),
            ("takeRateToken", { _ = try storage.takeRateToken("device \(device.id)", limit: RateLimit(rate: 5, burst: 10), at: 1000) }),
            ("activeStaffTokens", { _ = try storage.activeStaffTokens(at: 1000) }),
            ("checkAvailable", { try storage.checkAvailable() }),
            ("sessions", { _ = try storage.sessions() }),
            ("devices", { _ = try storage.devices() }),
            ("credentials", { _ = try storage.credentials() }),
            ("samples", { _ = try storage.samples(sessionId: "talk") }),
            ("latestSamples", { _ = try storage.latestSamples(sessionId: "talk", since: 0) }),
        ]
        var report: [String: Int] = [:]
        for (name, call) in calls {
            try call()  // prepares its statements
            let before = storage.roundTrips
            try call()
            report[name] = storage.roundTrips - before
        }
        print("round trips per call: " + calls.map { "\($0.0) \(report[$0.0]!)" }.joined(separator: ", "))
        // The calls a signed key fetch makes: at most one round trip each, and none to revalidate caches.
        #expect(report["generation"] == 0)
        for name in ["device", "session", "keyTable", "recordSignedRequest", "recordSignedRequest+sample", "enroll", "takeRateToken"] {
            #expect(report[name] == 1, "\(name)")
        }
    }
}

final class Storages: @unchecked Sendable {
    private let lock = NSLock()
    private var storages: [PostgresStorage] = []
    func add(_ storage: PostgresStorage) { lock.withLock { storages.append(storage) } }
}

/// Waits for `condition` (checked every 10 ms) up to `seconds`; throws when it never held.
func waitUntil(_ what: String, seconds: Double = 10, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while try !condition() {
        guard Date() < deadline else { throw WaitTimeout(what: what) }
        Thread.sleep(forTimeInterval: 0.01)
    }
}

struct WaitTimeout: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting until \(what)" }
}
