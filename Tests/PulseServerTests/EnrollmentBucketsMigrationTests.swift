import Foundation
import PulseCore
import PulsePostgres
import PulsePostgresTesting
import PulseSQLite
import PulseTestSupport
import Testing
@testable import PulseServerStorage

/// The schema version that counts enrollments in 10-second buckets (`enrollment_buckets`): a database from
/// before it gets the buckets of the last 10 minutes' enrollments, and enrollments afterwards add to them.
@Suite struct EnrollmentBucketsMigrationTests {
    /// A registration token with one device enrolled 30 s ago and one 20 minutes ago, through `storage`.
    static func enroll(_ storage: any ServerStorage, now: Int64) throws -> (token: [UInt8], id: String) {
        try TestContent.seed(storage, "talk")
        let token = try StorageSuiteTokenTests.token(storage)
        _ = try #require(try storage.enroll(credentialHash: token, device: StorageSuiteEnrollTests.device(1), at: now - 1200))
        _ = try #require(try storage.enroll(credentialHash: token, device: StorageSuiteEnrollTests.device(2), at: now - 30))
        return (token, CredentialSecret.listingId(hash: token))
    }

    static func expectCounted(_ storage: any ServerStorage, _ enrolled: (token: [UInt8], id: String), now: Int64) throws {
        #expect(try storage.recentEnrollments(since: now - 60) == [enrolled.id: 1])
        _ = try #require(try storage.enroll(credentialHash: enrolled.token, device: StorageSuiteEnrollTests.device(3), at: now))
        #expect(try storage.recentEnrollments(since: now - 60) == [enrolled.id: 2])
    }

    @Test func anSQLiteDatabaseFromBeforeItIsFilledOnOpen() throws {
        let folder = try TestFolder()
        let path = folder.url.appendingPathComponent("server.sqlite").path
        let now = Int64(Date().timeIntervalSince1970)
        let enrolled = try Self.enroll(try SQLiteStorage(path: path), now: now)
        let old = try Database(path: path)
        try old.execute("DROP TABLE enrollment_buckets; DELETE FROM schema_version WHERE version >= 10")
        let storage = try SQLiteStorage(path: path)
        try Self.expectCounted(storage, enrolled, now: now)
    }

    @Test func aPostgreSQLDatabaseFromBeforeItIsFilledOnOpen() throws {
        let database = try PostgresCluster.shared().createDatabase("enrollment-buckets")
        let now = Int64(Date().timeIntervalSince1970)
        let enrolled = try Self.enroll(try PostgresStorage(configuration: database.configuration), now: now)
        let old = try PostgresConnection(database.configuration)
        _ = try old.query("DROP TABLE enrollment_buckets")
        _ = try old.query("DELETE FROM schema_version WHERE version >= 9")
        let storage = try PostgresStorage(configuration: database.configuration)
        #expect(storage.schemaVersions.found == 8 && storage.schemaVersions.now == PostgresSchema.migrations.count)
        try Self.expectCounted(storage, enrolled, now: now)
    }
}
