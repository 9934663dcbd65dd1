import Foundation
import PulseCore
import PulseCrypto
import PulsePostgres
import PulsePostgresTesting
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseServer
@testable import PulseServerStorage

/// 5. Faults, with real processes behind nginx: an instance killed with SIGKILL in a burst, PostgreSQL
/// restarted under load, instances started together on a database of an older schema. (In the suite of
/// MultiInstanceTests, so one runs at a time.)
extension MultiInstanceTests {
    /// kill -9 of one instance in the middle of a burst of enrolls (240 codes, 8 clients) and key fetches (12
    /// devices, each at its rate limit): nginx's retries land on the others, so every enroll and every fetch is answered; every
    /// answered enroll is in the database under its code, no code has two devices, and every code spent was
    /// answered (an enroll the killed instance committed but could not answer was retried elsewhere and got
    /// the device it made).
    @Test func killDashNineOfAnInstanceDuringABurstOfEnrollsAndKeyFetches() throws {
        let fleet = try Self.fleet()
        try fleet.seed(["talk"])
        #expect(fleet.cli(["admin", "session", "advance", "talk", "--to", "4"]).code == 0)
        let fetchers = try (0..<12).map { _ in try fleet.enroll(try fleet.deviceCode("talk")) }
        let codes = try (0..<240).map { _ in try fleet.deviceCode("talk") }
        let victim = Int.random(in: 0..<3)
        let killAfter = Int.random(in: 40...120)
        let enrolls = Lines()  // "status deviceId code"
        let fetches = Lines()  // "status released"
        let killed = Locked(false)
        let finished = Counter()
        let started = Date()
        concurrently(8 + fetchers.count) { worker in
            if worker < 8 {
                defer { finished.add() }
                for index in stride(from: worker, to: codes.count, by: 8) {
                    let body = TestDevice.enrollBody(token: codes[index], key: try! P256.PrivateKey())
                    let response = try? fleet.client(source: "127.0.3.\(worker + 1)", timeout: 20).request("POST", "/api/sync/enroll", body: body)
                    enrolls.add(out: "\(response?.status ?? 0) \(response?.json?["deviceId"]?.stringValue ?? "-") \(codes[index])")
                    killed.withLock { done in
                        if !done && enrolls.out.count >= killAfter {
                            done = true
                            fleet.servers[victim].signal(SIGKILL)
                        }
                    }
                }
            } else {
                let device = fetchers[worker - 8]
                var sent = 0
                while finished.value < 8 || sent < 10 {  // through the burst, and past the kill
                    sent += 1
                    let response = try? fleet.client(timeout: 20).signed("GET", "/api/sync/keys?session=talk", by: device, at: InstanceFleet.now)
                    let released = response.flatMap { $0.status == 200 ? try? KeysReleaseWalkTests.released($0).map(\.n) : nil }
                    fetches.add(out: "\(response?.status ?? 0) \(released.map { "\($0)" } ?? "-")")
                    usleep(200_000)  // 5 a second: the device's rate limit
                }
            }
        }
        #expect(killed.withLock { $0 }, "the burst ended before the kill")
        #expect(fleet.servers[victim].waitForExit(within: 5) != nil)

        let answered = enrolls.out.map { $0.split(separator: " ").map(String.init) }
        #expect(answered.count == codes.count)
        #expect(answered.allSatisfy { $0[0] == "200" }, "not every enroll was answered 200: \(answered.filter { $0[0] != "200" })")
        let storage = try Self.storage(fleet)
        for line in answered where line[0] == "200" {
            let device = try #require(try storage.device(id: line[1]), "an answered enroll is missing: \(line[1])")
            #expect(device.credentialId == CredentialSecret.listingId(hash: try #require(CredentialSecret.hash(line[2]))))
        }
        #expect(Set(answered.map { $0[1] }).count == answered.count, "two codes answered with one device")
        let db = try PostgresConnection(fleet.database.configuration)
        #expect(try db.query("SELECT count(*) FROM (SELECT credential_hash FROM devices GROUP BY 1 HAVING count(*) > 1) twice").first?.int(0) == 0)
        // No code spent without its answer: every code spent (the fetchers' and the burst's) was answered.
        let spent = fetchers.count + codes.count
        #expect(try db.query("SELECT count(*) FROM credentials WHERE kind = 'device-code' AND devices_enrolled = 1").first?.int(0) == spent)
        #expect(try storage.devices().count == spent)

        let fetched = fetches.out
        #expect(fetched.allSatisfy { $0 == "200 [0, 1, 2, 3, 4]" || $0.hasPrefix("429 ") }, "\(Set(fetched))")
        let survivors = (0..<3).filter { $0 != victim }
        let again = survivors.flatMap { fleet.accessLog($0) }.filter { $0.contains("enrolled:again") }.count
        print("killed instance \(victim) after \(killAfter) answered enrolls (burst of \(String(format: "%.1f", Date().timeIntervalSince(started))) s): \(answered.count) of \(codes.count) enrolls answered 200, "
            + "\(again) of them retried by nginx from the device the killed instance had committed; \(fetched.count) key fetches, "
            + "\(fetched.filter { $0.hasPrefix("200") }.count) answered 200, \(fetched.filter { $0.hasPrefix("429") }.count) 429")
    }

    /// PostgreSQL stopped and started again under load (six devices fetching keys, one enrolling): while it is
    /// down every answer is 503 with Retry-After (never a key, never a wrong one), /healthz says 503; the
    /// instances reconnect on their own, and an advance after the restart is what every fetch sends next.
    /// Every response of the run is checked.
    @Test func aPostgreSQLRestartUnderLoadIs503WithRetryAfterThenEverythingRecovers() throws {
        let cluster = try PostgresCluster()  // its own: stopping the shared one would fail other tests
        defer { cluster.destroy() }
        let fleet = try InstanceFleet(try cluster.createDatabase("restart"), count: 2)
        try fleet.seed(["talk"])
        #expect(fleet.cli(["admin", "session", "advance", "talk", "--to", "3"]).code == 0)
        let staff = try fleet.staffToken()
        let devices = try (0..<6).map { _ in try fleet.enroll(try fleet.deviceCode("talk")) }
        let codes = try (0..<300).map { _ in try fleet.deviceCode("talk") }
        let enrollRefusals = Counter()

        /// Every response: when its request was sent and its answer came back, what came back.
        struct Answer { var sent: Date; var answered: Date; var status: Int; var released: [Int]?; var retryAfter: String?; var body: String }
        let answers = Locked<[[Answer]]>(Array(repeating: [], count: devices.count))
        let enrolled = Locked<[(code: String, id: String, unavailable: Int)]>([])
        let stop = Counter()
        let record: @Sendable (Int, Date, RawHTTPResponse?) -> Void = { n, sent, response in
            let released = response.flatMap { $0.status == 200 ? try? KeysReleaseWalkTests.released($0).map(\.n) : nil }
            let answer = Answer(sent: sent, answered: Date(), status: response?.status ?? 0, released: released, retryAfter: response?.header("retry-after"), body: response?.text ?? "")
            answers.withLock { $0[n].append(answer) }
        }
        let load = Thread {
            concurrently(devices.count + 1) { n in
                if n == devices.count {
                    // Enrolls, each asked again after a 503 until answered (as the app does).
                    for code in codes where stop.value == 0 {
                        let body = TestDevice.enrollBody(token: code, key: try! P256.PrivateKey())
                        usleep(100_000)  // ten a second, so that enrolls span the restart
                        var unavailable = 0
                        while stop.value == 0 {
                            let response = try? fleet.client(timeout: 20).request("POST", "/api/sync/enroll", body: body)
                            if response?.status == 200, let id = response?.json?["deviceId"]?.stringValue {
                                enrolled.withLock { $0.append((code, id, unavailable)) }
                                break
                            }
                            if response?.status == 503 {
                                unavailable += 1
                                enrollRefusals.add()
                            }
                            usleep(300_000)
                        }
                    }
                    return
                }
                while stop.value == 0 {
                    let sent = Date()
                    record(n, sent, try? fleet.client(timeout: 20).signed("GET", "/api/sync/keys?session=talk", by: devices[n], at: InstanceFleet.now))
                    usleep(200_000)  // 5 a second: the device's rate limit
                }
            }
        }
        load.start()
        func everyDevice(within seconds: Double, _ condition: @escaping ([Answer]) -> Bool) -> Bool {
            eventually(within: seconds) { answers.withLock { $0.allSatisfy(condition) } }
        }
        #expect(everyDevice(within: 20) { $0.count >= 2 })
        try cluster.stop()
        let stopped = Date()
        #expect(everyDevice(within: 20) { $0.contains { $0.sent > stopped && $0.status == 503 } }, "not every device saw a 503")
        #expect(eventually(within: 20) { enrollRefusals.value > 0 }, "no enroll was refused")
        #expect(try fleet.client().request("GET", "/healthz").status == 503)
        usleep(1_000_000)  // down for a while: several fetches of every device meet it
        // From here PostgreSQL may accept connections before start() returns: a fetch answered after this moment
        // may rightly hold keys.
        let restarting = Date()
        try cluster.start()
        let restarted = Date()
        #expect(everyDevice(within: 30) { $0.contains { $0.sent > restarted && $0.status == 200 } }, "not every device recovered")
        #expect(try fleet.client().request("GET", "/healthz").status == 200)
        let advance = try fleet.client().request("POST", "/api/staff/sessions/talk/advance", [("Authorization", "Bearer \(staff)")], body: Array(#"{"maxShown":6}"#.utf8))
        #expect(advance.status == 200, "\(advance.text)")
        let advanced = Date()
        #expect(everyDevice(within: 20) { $0.contains { $0.sent > advanced && $0.released?.count == 7 } })
        stop.add()
        load.cancel()
        #expect(eventually(within: 30) { load.isFinished })

        let all = answers.withLock { $0 }
        for (n, responses) in all.enumerated() {
            for answer in responses {
                switch answer.status {
                case 200:
                    #expect(answer.released == [0, 1, 2, 3] || answer.released == Array(0...6), "device \(n): \(answer.released ?? [])")
                    if answer.sent > advanced { #expect(answer.released == Array(0...6), "device \(n) was sent an old frontier after the advance") }
                    if answer.sent > stopped && answer.answered < restarting { Issue.record("device \(n) got keys while PostgreSQL was stopped") }
                case 503:
                    #expect(answer.retryAfter == "1" && answer.body == #"{"error":"unavailable"}"#, "device \(n): \(answer.body)")
                case 429:
                    #expect(answer.retryAfter != nil)
                default:
                    Issue.record("device \(n): status \(answer.status) \(answer.body)")
                }
            }
        }
        let made = enrolled.withLock { $0 }
        let storage = try Self.storage(fleet)
        for enrollment in made {
            #expect(try storage.device(id: enrollment.id)?.credentialId == CredentialSecret.listingId(hash: CredentialSecret.hash(enrollment.code)!))
        }
        #expect(Set(made.map(\.id)).count == made.count)
        #expect(try storage.devices().count == devices.count + made.count)
        let statuses = all.flatMap { $0 }.map(\.status)
        print("PostgreSQL restart under load: \(statuses.count) key fetches (\(statuses.filter { $0 == 200 }.count) × 200, "
            + "\(statuses.filter { $0 == 503 }.count) × 503, \(statuses.filter { $0 == 429 }.count) × 429); \(made.count) enrolls, "
            + "\(made.filter { $0.unavailable > 0 }.count) of them answered 503 first; down for \(String(format: "%.1f", restarting.timeIntervalSince(stopped))) s")
    }

    /// Three instances started together on a database of schema version 1 holding an event: exactly one
    /// migrates it (the others wait on the migration lock and find the newest version), and the event goes on:
    /// the device enrolled under version 1 fetches its keys through every instance, and an enrollment asked
    /// again (what version 2 adds) gets the device it made.
    ///
    /// The version 1 database is this program's, taken back to version 1 (version 8's enrollment buckets dropped, version 7's diag_latest dropped, version 6's answer
    /// keys and series generation dropped, version 5's staff role columns and
    /// their checks dropped, version 4's audit table dropped,
    /// version 3's columns, index and
    /// trigger function undone, version 2's objects dropped, the old index put back), and checked to have
    /// exactly the tables, indexes, functions and triggers of a database that only ever ran migration 1.
    @Test func instancesStartingTogetherOnAVersion1DatabaseMigrateItOnce() throws {
        let cluster = try PostgresCluster.shared()
        let database = try cluster.createDatabase("older")
        let key = try P256.PrivateKey()
        let deviceId = try DeviceID.generate()
        do {
            let storage = try PostgresStorage(configuration: database.configuration, connections: 2, watchChanges: false)
            try TestContent.seed(storage, "talk", state: .live)
            _ = try storage.advance(sessionId: "talk", to: 2, at: InstanceFleet.now)
            let code = try StorageSuiteEnrollTests.code(storage)
            _ = try #require(try storage.enroll(
                credentialHash: code, device: NewDevice(id: deviceId, publicKey: key.publicKey.derRepresentation, platform: "ios", name: "Old"),
                at: InstanceFleet.now))
        }
        let db = try PostgresConnection(database.configuration)
        try db.execute("""
            DROP TABLE enrollment_buckets;
            DROP TRIGGER diag_latest_keep ON diag_samples;
            DROP FUNCTION pulse_diag_latest();
            DROP TABLE diag_latest;
            DROP TABLE answer_keys;
            ALTER TABLE series DROP COLUMN generation;
            ALTER TABLE credentials DROP COLUMN staff_role, DROP COLUMN staff_session;
            DROP TABLE audit;
            DROP FUNCTION pulse_audit_append_only();
            ALTER TABLE credentials DROP COLUMN enroll_rate, DROP COLUMN enroll_burst, DROP COLUMN max_streams;
            DROP INDEX devices_enrolled;
            CREATE OR REPLACE FUNCTION pulse_notify_credential_update() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify('pulse_changes', CASE
                    WHEN (OLD.hash, OLD.listing_id, OLD.kind, OLD.scope_kind, OLD.scope_id, OLD.max_devices, OLD.created_at,
                          OLD.expires_at, OLD.revoked_at)
                        IS NOT DISTINCT FROM (NEW.hash, NEW.listing_id, NEW.kind, NEW.scope_kind, NEW.scope_id, NEW.max_devices,
                          NEW.created_at, NEW.expires_at, NEW.revoked_at)
                    THEN 'credentials:ENROLL' ELSE 'credentials:UPDATE' END);
                RETURN NULL;
            END $$;
            DROP FUNCTION pulse_enroll(bigint, bytea, text, bytea, text, text);
            DROP TABLE certificate_keys;
            DROP INDEX devices_credential_key;
            CREATE INDEX devices_credential ON devices (credential_hash);
            DELETE FROM schema_version WHERE version > 1;
            """)
        let reference = try cluster.createDatabase("version1")
        try PostgresConnection(reference.configuration).migrate(Array(PostgresStorage.migrations.prefix(1)), lockKey: 1)
        #expect(try Self.catalog(database) == (try Self.catalog(reference)))

        let fleet = try InstanceFleet(database, count: 3)
        let newest = PostgresStorage.migrations.count
        let migrated = fleet.servers.filter { $0.errorLines.contains { $0.contains("migrated the database schema from version 1 to \(newest)") } }
        #expect(migrated.count == 1, "\(fleet.servers.map(\.errorLines))")
        let versions = try PostgresConnection(database.configuration).query("SELECT version FROM schema_version ORDER BY version").rows.map { try $0.int(0) }
        #expect(versions == Array(1...newest))

        let device = TestDevice(id: deviceId, key: key)
        for instance in 0..<3 {
            let keys = try fleet.direct(instance).signed("GET", "/api/sync/keys?session=talk", by: device, at: InstanceFleet.now)
            #expect(keys.status == 200, "instance \(instance): \(keys.text)")
            #expect(try KeysReleaseWalkTests.released(keys).map(\.n) == [0, 1, 2])
        }
        let code = try fleet.deviceCode("talk")
        let body = TestDevice.enrollBody(token: code, key: try P256.PrivateKey())
        let first = try fleet.client().request("POST", "/api/sync/enroll", body: body)
        let again = try fleet.client().request("POST", "/api/sync/enroll", body: body)
        #expect(first.status == 200 && again.json?["deviceId"] == first.json?["deviceId"], "\(first.text) \(again.text)")
    }

    /// The public schema's relations (with their kind), functions and triggers, by name.
    static func catalog(_ database: TestDatabase) throws -> [String] {
        let db = try PostgresConnection(database.configuration)
        let relations = try db.query("""
            SELECT c.relname || ' ' || c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'
            """).rows.map { try $0.string(0) }
        let functions = try db.query("SELECT 'function ' || proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace").rows.map { try $0.string(0) }
        let triggers = try db.query("SELECT 'trigger ' || tgname FROM pg_trigger WHERE NOT tgisinternal").rows.map { try $0.string(0) }
        return (relations + functions + triggers).sorted()
    }
}

/// A value behind a lock, for closures that run on several threads.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&value) }
    }
}
