import Foundation
import PulsePostgres
import PulsePostgresTesting
import Testing

@Suite struct TransactionTests {
    struct Refusal: Error {}

    @Test func aThrowingBodyRollsBackAndAReturningOneCommits() throws {
        let database = try PostgresCluster.shared().createDatabase()
        let db = try PostgresConnection(database.configuration)
        try db.execute("CREATE TABLE t (n integer)")
        #expect(throws: Refusal.self) {
            try db.transaction { db in
                _ = try db.query("INSERT INTO t VALUES ($1)", [1])
                throw Refusal()
            }
        }
        #expect(!db.isInTransaction)
        try db.transaction { db in _ = try db.query("INSERT INTO t VALUES ($1)", [2]) }
        #expect(try db.query("SELECT n FROM t").rows.map { try $0.int(0) } == [2])
    }

    @Test func aFailedStatementSwallowedInsideMakesCommitThrowAndKeepsNothing() throws {
        let database = try PostgresCluster.shared().createDatabase()
        let db = try PostgresConnection(database.configuration)
        try db.execute("CREATE TABLE t (n integer PRIMARY KEY)")
        let error = #expect(throws: PostgresError.self) {
            try db.transaction { db in
                _ = try db.query("INSERT INTO t VALUES ($1)", [1])
                _ = try? db.query("INSERT INTO t VALUES ($1)", [1])  // fails: the transaction is aborted
            }
        }
        #expect(error?.kind == .misuse)
        #expect(try db.query("SELECT count(*) FROM t").first?.int(0) == 0)
        #expect(throws: PostgresError.self) { try db.transaction { db in try db.transaction { _ in } } }
    }

    @Test func aSerializationFailureIsRetriedByThePool() throws {
        let database = try PostgresCluster.shared().createDatabase()
        let pool = PostgresPool(configuration: database.configuration, capacity: 2)
        let other = try PostgresConnection(database.configuration)
        try other.execute("CREATE TABLE c (id integer PRIMARY KEY, n integer); INSERT INTO c VALUES (1, 0)")
        var attempts = 0
        try pool.transaction(.repeatableRead) { db in
            attempts += 1
            let seen = try db.query("SELECT n FROM c WHERE id = 1").first!.int(0)
            // Another writer commits between this transaction's snapshot and its update, once.
            if attempts == 1 { _ = try other.query("UPDATE c SET n = n + 10 WHERE id = 1") }
            _ = try db.query("UPDATE c SET n = $1 WHERE id = 1", [.int(seen + 1)])
        }
        #expect(attempts == 2)
        #expect(try other.query("SELECT n FROM c").first?.int(0) == 11)  // the retry saw the other write
    }

    @Test func theSameConflictWithoutTheRetryIsASerializationFailure() throws {
        let database = try PostgresCluster.shared().createDatabase()
        let a = try PostgresConnection(database.configuration)
        let b = try PostgresConnection(database.configuration)
        try a.execute("CREATE TABLE c (id integer PRIMARY KEY, n integer); INSERT INTO c VALUES (1, 0)")
        let error = #expect(throws: PostgresError.self) {
            try a.transaction(.repeatableRead) { a in
                _ = try a.query("SELECT n FROM c")
                _ = try b.query("UPDATE c SET n = 5")
                _ = try a.query("UPDATE c SET n = 1")
            }
        }
        #expect(error?.kind == .serializationFailure && error?.sqlState == "40001" && error?.isRetryable == true)
    }
}
