import PulseCore
import PulsePostgres
import PulsePostgresTesting
import PulseSQLite
import PulseTestSupport
import Testing
@testable import PulseServerStorage

/// The schema version that keeps each device's newest sample per session (`diag_latest`): a database from
/// before it gets the table filled from the samples it holds, and samples stored afterwards keep it current.
@Suite struct DiagLatestMigrationTests {
    /// Two devices' samples, stored through `storage`: the newest of device 0 is at 1050, of device 1 at 1020.
    static func post(_ storage: any ServerStorage) throws -> (devices: [DeviceRecord], samples: [DiagSample]) {
        try TestContent.seed(storage, "talk")
        var devices: [DeviceRecord] = []
        for n in 1...2 {
            devices.append(try #require(try storage.enroll(
                credentialHash: try StorageSuiteEnrollTests.code(storage), device: StorageSuiteEnrollTests.device(n), at: 1000)))
        }
        let samples = [(0, 1000), (1, 1010), (0, 1050), (1, 1020)].map { device, at in
            DiagSample(sessionId: "talk", deviceId: devices[device].id, receivedAt: Int64(at), build: "b\(at)", platform: "ios", connection: [:])
        }
        for (n, sample) in samples.enumerated() {
            #expect(try storage.recordSignedRequest(replayKey: [UInt8(n), 1], expiresAt: 5000, sample: sample, at: sample.receivedAt))
        }
        return (devices, samples)
    }

    /// What the migrated database must answer, then one more sample that must move device 1's row.
    static func expectCurrent(_ storage: any ServerStorage, _ posted: (devices: [DeviceRecord], samples: [DiagSample])) throws {
        #expect(try storage.latestSamples(sessionId: "talk", since: 0, limit: 10) == ([posted.samples[2], posted.samples[3]], 2))
        #expect(try storage.latestSamples(deviceIds: posted.devices.map(\.id)).count == 2)
        let later = DiagSample(sessionId: "talk", deviceId: posted.devices[1].id, receivedAt: 1100, build: "b1100", platform: "ios", connection: [:])
        #expect(try storage.recordSignedRequest(replayKey: [9, 9], expiresAt: 5000, sample: later, at: 1100))
        #expect(try storage.latestSamples(sessionId: "talk", since: 0, limit: 1) == ([later], 2))
        #expect(try storage.latestSamples(deviceIds: [posted.devices[1].id]) == [posted.devices[1].id: later])
    }

    @Test func anSQLiteDatabaseFromBeforeItIsFilledOnOpen() throws {
        let folder = try TestFolder()
        let path = folder.url.appendingPathComponent("server.sqlite").path
        let posted = try Self.post(try SQLiteStorage(path: path))
        // Back to version 7, as a database written before this version would be (versions 9, answer_keys.ttl, and
        // 10, the enrollment buckets, undone too).
        let old = try Database(path: path)
        try old.execute("""
            DROP TRIGGER diag_latest_keep; DROP TABLE diag_latest; ALTER TABLE answer_keys DROP COLUMN ttl;
            DROP TABLE enrollment_buckets; DELETE FROM schema_version WHERE version >= 8
            """)
        let storage = try SQLiteStorage(path: path)
        #expect(try old.scalarInteger("SELECT count(*) FROM diag_latest") == 2)
        try Self.expectCurrent(storage, posted)
    }

    @Test func aPostgreSQLDatabaseFromBeforeItIsFilledOnOpen() throws {
        let database = try PostgresCluster.shared().createDatabase("diag-latest")
        let posted = try Self.post(try PostgresStorage(configuration: database.configuration))
        let old = try PostgresConnection(database.configuration)
        _ = try old.query("DROP TRIGGER diag_latest_keep ON diag_samples")
        _ = try old.query("DROP FUNCTION pulse_diag_latest()")
        _ = try old.query("DROP TABLE diag_latest")
        _ = try old.query("ALTER TABLE answer_keys DROP COLUMN ttl")  // version 8, undone too
        _ = try old.query("DROP TABLE enrollment_buckets")  // version 9, undone too
        _ = try old.query("DELETE FROM schema_version WHERE version >= 7")
        let storage = try PostgresStorage(configuration: database.configuration)
        #expect(storage.schemaVersions.found == 6 && storage.schemaVersions.now == PostgresSchema.migrations.count)
        try Self.expectCurrent(storage, posted)
    }
}
