import Foundation
import Testing
import PulseSQLite
import PulseTestSupport

@Suite struct PoolTests {
    final class Gauge: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var current = 0
        private(set) var highest = 0
        private(set) var opened = 0
        func enter() { lock.withLock { current += 1; highest = max(highest, current) } }
        func leave() { lock.withLock { current -= 1 } }
        func open() { lock.withLock { opened += 1 } }
    }

    @Test func neverHandsOneConnectionToTwoThreadsAndNeverOpensMoreThanItsCapacity() throws {
        let folder = try TestFolder()
        let path = folder.databasePath
        let gauge = Gauge()
        let pool = DatabasePool(capacity: 3) { gauge.open(); return try Database(path: path) }
        let users = ObjectIdentifiers()
        DispatchQueue.concurrentPerform(iterations: 64) { _ in
            try? pool.withConnection { db in
                gauge.enter()
                defer { gauge.leave() }
                users.claim(db)
                defer { users.release(db) }
                _ = try db.scalarInteger("SELECT 1")
            }
        }
        #expect(gauge.highest <= 3)
        #expect(gauge.opened <= 3)
        #expect(users.conflicts == 0)
    }

    @Test func aConnectionComesBackWithoutAnOpenTransaction() throws {
        let folder = try TestFolder()
        let path = folder.databasePath
        let pool = DatabasePool(capacity: 1) { try Database(path: path) }
        try pool.withConnection { db in try db.execute("CREATE TABLE t (a); BEGIN IMMEDIATE; INSERT INTO t VALUES (1)") }
        try pool.withConnection { db throws in
            #expect(!db.isInTransaction)
            #expect(try db.scalarInteger("SELECT count(*) FROM t") == 0)
        }
    }

    @Test func aFailedOpenFreesItsPlace() throws {
        let pool = DatabasePool(capacity: 1) { try Database(path: "/nonexistent-\(UUID())/x.sqlite") }
        #expect(throws: SQLiteError.self) { try pool.withConnection { _ in } }
        #expect(throws: SQLiteError.self) { try pool.withConnection { _ in } }  // would hang if the slot leaked
    }
}

final class ObjectIdentifiers: @unchecked Sendable {
    private let lock = NSLock()
    private var inUse: Set<ObjectIdentifier> = []
    private(set) var conflicts = 0
    func claim(_ object: AnyObject) { lock.withLock { if !inUse.insert(ObjectIdentifier(object)).inserted { conflicts += 1 } } }
    func release(_ object: AnyObject) { lock.withLock { _ = inUse.remove(ObjectIdentifier(object)) } }
}

@Suite struct MigrationTests {
    /// Version 2 creates a table without IF NOT EXISTS: running it twice would fail.
    let migrations = [
        Migration(version: 1, sql: "CREATE TABLE a (x)"),
        Migration(version: 2, sql: "CREATE TABLE b (y); INSERT INTO a VALUES ('migrated to 2')"),
    ]

    @Test func freshDatabaseGetsEveryStep() throws {
        let folder = try TestFolder()
        let database = try folder.openDatabase()
        #expect(try database.migrate(migrations) == (0, 2))
        #expect(try database.migrate(migrations) == (2, 2))
        #expect(try database.scalarInteger("SELECT count(*) FROM schema_version") == 2)
    }

    @Test func olderSchemaMigratesOnce() throws {
        let folder = try TestFolder()
        try folder.openDatabase().migrate(Array(migrations.prefix(1)))
        let database = try folder.openDatabase()
        #expect(try database.migrate(migrations) == (1, 2))
        #expect(try database.migrate(migrations) == (2, 2))
        #expect(try database.scalarInteger("SELECT count(*) FROM a") == 1)
    }

    @Test func concurrentStartsMigrateOnce() throws {
        let folder = try TestFolder()
        try folder.openDatabase().migrate(Array(migrations.prefix(1)))
        let path = folder.databasePath
        let results = Results()
        let migrations = migrations
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do { results.add(try Database(path: path).migrate(migrations).from) } catch { results.fail(error) }
        }
        #expect(results.failures.isEmpty, "\(results.failures)")
        #expect(results.froms.sorted() == [1, 2, 2, 2, 2, 2, 2, 2])
        #expect(try folder.openDatabase().scalarInteger("SELECT count(*) FROM a") == 1)
    }

    @Test func aFailingMigrationLeavesTheOldSchema() throws {
        let folder = try TestFolder()
        try folder.openDatabase().migrate(Array(migrations.prefix(1)))
        let broken = migrations.prefix(1) + [Migration(version: 2, sql: "CREATE TABLE b (y); INSERT INTO nowhere VALUES (1)")]
        #expect(throws: SQLiteError.self) { try folder.openDatabase().migrate(Array(broken)) }
        let database = try folder.openDatabase()
        #expect(try database.scalarInteger("SELECT max(version) FROM schema_version") == 1)
        #expect(try database.scalarInteger("SELECT count(*) FROM sqlite_schema WHERE name = 'b'") == 0)
    }

    @Test func newerSchemaIsRefused() throws {
        let folder = try TestFolder()
        try folder.openDatabase().migrate(migrations)
        let error = #expect(throws: SQLiteError.self) { try folder.openDatabase().migrate(Array(migrations.prefix(1))) }
        #expect(error?.message.contains("schema version 2, newer than this program knows (1)") == true)
    }
}

final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var froms: [Int] = []
    private(set) var failures: [String] = []
    func add(_ from: Int) { lock.withLock { froms.append(from) } }
    func fail(_ error: any Error) { lock.withLock { failures.append("\(error)") } }
}
