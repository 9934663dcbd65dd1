import Foundation
import Testing
import PulseSQLite
import PulseTestSupport

@Suite struct TransactionTests {
    struct Boom: Error {}

    @Test func commitsWhenTheBodyReturnsAndRollsBackWhenItThrows() throws {
        let folder = try TestFolder()
        let database = try folder.openDatabase()
        try database.execute("CREATE TABLE t (a INTEGER)")
        let value = try database.transaction { db in
            try db.cached("INSERT INTO t VALUES (1)").run()
            return 42
        }
        #expect(value == 42)
        #expect(throws: Boom.self) {
            try database.transaction { db in
                try db.cached("INSERT INTO t VALUES (2)").run()
                throw Boom()
            }
        }
        #expect(!database.isInTransaction)
        #expect(try database.scalarInteger("SELECT group_concat(a) FROM t").map(String.init) == "1")
        // Another connection sees only the committed row.
        #expect(try folder.openDatabase().scalarInteger("SELECT count(*) FROM t") == 1)
    }

    @Test func transactionsDoNotNest() throws {
        let folder = try TestFolder()
        let database = try folder.openDatabase()
        let error = #expect(throws: SQLiteError.self) {
            try database.transaction { db in try db.transaction { _ in } }
        }
        #expect(error?.message.contains("already open") == true)
        #expect(!database.isInTransaction)
    }

    @Test func immediateTransactionTakesTheWriteLockAtBegin() throws {
        let folder = try TestFolder()
        let first = try folder.openDatabase()
        try first.execute("CREATE TABLE t (a)")
        var impatient = Database.Options()
        impatient.busyTimeoutMilliseconds = 0
        let second = try folder.openDatabase(impatient)
        try first.transaction(.immediate) { _ throws in
            // No statement has written yet, and still the second writer cannot begin.
            let error = #expect(throws: SQLiteError.self) { try second.transaction(.immediate) { _ in } }
            #expect(error?.isBusy == true)
            // A deferred reader is not blocked by the writer (WAL).
            #expect(try second.transaction(.deferred) { db in try db.scalarInteger("SELECT count(*) FROM t") } == 0)
        }
    }

    @Test func writersOnManyThreadsQueueOnTheLockAndLoseNothing() throws {
        let folder = try TestFolder()
        try folder.openDatabase().execute("CREATE TABLE counter (n INTEGER NOT NULL); INSERT INTO counter VALUES (0)")
        let path = folder.databasePath
        let pool = DatabasePool(capacity: 4) { try Database(path: path) }
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 40) { _ in
            do {
                try pool.withConnection { db in
                    try db.transaction { db in
                        // Read, then write: safe only because BEGIN IMMEDIATE serialized us.
                        let n = try db.scalarInteger("SELECT n FROM counter")!
                        try db.cached("UPDATE counter SET n = ?").run([.integer(n + 1)])
                    }
                }
            } catch { failures.add(error) }
        }
        #expect(failures.all.isEmpty)
        #expect(try folder.openDatabase().scalarInteger("SELECT n FROM counter") == 40)
    }
}

final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [any Error] = []
    func add(_ error: any Error) { lock.withLock { errors.append(error) } }
    var all: [any Error] { lock.withLock { errors } }
}
