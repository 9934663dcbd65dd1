import Foundation
import Testing
import PulseSQLite

@Suite struct TransactionTests {
    struct Boom: Error {}

    @Test func commitsWhenTheBodyReturnsAndRollsBackWhenItThrows() throws {
        let file = try TemporaryDatabase()
        let database = try file.open()
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
        #expect(try file.open().scalarInteger("SELECT count(*) FROM t") == 1)
    }

    @Test func transactionsDoNotNest() throws {
        let file = try TemporaryDatabase()
        let database = try file.open()
        let error = #expect(throws: SQLiteError.self) {
            try database.transaction { db in try db.transaction { _ in } }
        }
        #expect(error?.message.contains("already open") == true)
        #expect(!database.isInTransaction)
    }

    @Test func immediateTransactionTakesTheWriteLockAtBegin() throws {
        let file = try TemporaryDatabase()
        let first = try file.open()
        try first.execute("CREATE TABLE t (a)")
        var impatient = Database.Options()
        impatient.busyTimeoutMilliseconds = 0
        let second = try file.open(impatient)
        try first.transaction(.immediate) { _ throws in
            // No statement has written yet, and still the second writer cannot begin.
            let error = #expect(throws: SQLiteError.self) { try second.transaction(.immediate) { _ in } }
            #expect(error?.isBusy == true)
            // A deferred reader is not blocked by the writer (WAL).
            #expect(try second.transaction(.deferred) { db in try db.scalarInteger("SELECT count(*) FROM t") } == 0)
        }
    }

    @Test func writersOnManyThreadsQueueOnTheLockAndLoseNothing() throws {
        let file = try TemporaryDatabase()
        try file.open().execute("CREATE TABLE counter (n INTEGER NOT NULL); INSERT INTO counter VALUES (0)")
        let path = file.path
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
        #expect(try file.open().scalarInteger("SELECT n FROM counter") == 40)
    }
}

final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [any Error] = []
    func add(_ error: any Error) { lock.withLock { errors.append(error) } }
    var all: [any Error] { lock.withLock { errors } }
}
