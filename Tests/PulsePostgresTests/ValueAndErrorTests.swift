import Foundation
import PulsePostgres
import PulsePostgresTesting
import Testing

/// Values through parameters and back, and errors with their SQLSTATE.
@Suite struct ValueAndErrorTests {
    static func connect() throws -> (TestDatabase, PostgresConnection) {
        let database = try PostgresCluster.shared().createDatabase()
        return (database, try PostgresConnection(database.configuration))
    }

    @Test func everyTypeRoundTripsThroughParametersAndBinaryResults() throws {
        let (database, db) = try Self.connect()
        defer { withExtendedLifetime(database) {} }
        let allBytes = (0...255).map(UInt8.init)
        let row = try #require(try db.query(
            "SELECT $1::bigint, $2::integer, $3::smallint, $4::boolean, $5::text, $6::bytea, $7::bytea, $8::text, $9::float8, $10::bigint",
            [.integer(Int64.min), .integer(-2_000_000_000), .integer(-7), .bool(true), .text("Grüße, 🎤"), .bytes(allBytes), .bytes([]),
             .null, .double(2.5), .integer(Int64.max)]).first)
        #expect(try row.int64(0) == Int64.min)
        #expect(try row.int(1) == -2_000_000_000)
        #expect(try row.int(2) == -7)
        #expect(try row.bool(3))
        #expect(try row.string(4) == "Grüße, 🎤")
        #expect(try row.bytes(5) == allBytes)
        #expect(try row.bytes(6) == [])
        #expect(try row.isNull(7) && row.optionalString(7) == nil)
        #expect(try row.double(8) == 2.5)
        #expect(try row.int64(9) == Int64.max)
        // The server infers parameter types from the statement: one integer fits int4 and int8 columns.
        try db.execute("CREATE TABLE t (a integer, b bigint, c bytea)")
        _ = try db.query("INSERT INTO t VALUES ($1, $2, $3)", [.int(5), .int(5), .bytes([0, 1, 0])])
        let back = try #require(try db.query("SELECT a, b, c FROM t WHERE a = $1 AND b = $2", [.int(5), .int(5)]).first)
        #expect(try back.int(0) == 5 && back.int(1) == 5 && back.bytes(2) == [0, 1, 0])
    }

    @Test func aColumnOfATypeNotDecodedIsAnErrorNamingIt() throws {
        let (database, db) = try Self.connect()
        defer { withExtendedLifetime(database) {} }
        let error = #expect(throws: PostgresError.self) { try db.query("SELECT 1.5::numeric AS price") }
        #expect(error?.kind == .misuse && error?.message.contains("price") == true)
        let mismatch = #expect(throws: PostgresError.self) { try db.query("SELECT 'x'::text AS name").first?.int(0) }
        #expect(mismatch?.message == "column name is text, not an integer")
        #expect(throws: PostgresError.self) { try db.query("SELECT $1::text", [.text("a\u{0}b")]) }
    }

    @Test func errorsCarryTheirSQLStateAndNeverTheValues() throws {
        let (database, db) = try Self.connect()
        defer { withExtendedLifetime(database) {} }
        try db.execute("CREATE TABLE k (key bytea PRIMARY KEY, n integer CHECK (n >= 0))")
        let secret: [UInt8] = Array("very-secret-token".utf8)
        _ = try db.query("INSERT INTO k VALUES ($1, 1)", [.bytes(secret)])
        let duplicate = #expect(throws: PostgresError.self) { try db.query("INSERT INTO k VALUES ($1, 1)", [.bytes(secret)]) }
        #expect(duplicate?.kind == .uniqueViolation && duplicate?.sqlState == "23505" && duplicate?.constraint == "k_pkey")
        // PostgreSQL's DETAIL quotes the key ("Key (key)=(\x7665…) already exists"): it is never kept.
        #expect(duplicate.map { "\($0)" }?.contains("7665") == false)
        #expect(duplicate.map { "\($0)" }?.contains("very-secret") == false)
        let check = #expect(throws: PostgresError.self) { try db.query("INSERT INTO k VALUES ($1, -1)", [.bytes([1])]) }
        #expect(check?.kind == .constraintViolation && check?.sqlState == "23514")
        let syntax = #expect(throws: PostgresError.self) { try db.query("SELEKT 1") }
        #expect(syntax?.kind == .server && syntax?.sqlState == "42601")
        // The connection is still usable after errors.
        #expect(try db.query("SELECT count(*) FROM k").first?.int(0) == 1)
    }

    @Test func roundTripsAreCountedPerStatementAndPreparingOnce() throws {
        let (database, _) = try Self.connect()
        defer { withExtendedLifetime(database) {} }
        let counter = RoundTripCounter()
        let db = try PostgresConnection(database.configuration, counter: counter)
        _ = try db.query("SELECT $1::int", [1])
        #expect(counter.value == 2)  // prepare, then execute
        _ = try db.query("SELECT $1::int", [2])
        #expect(counter.value == 3)
        _ = try db.queryOnce("SELECT $1::int", [3])
        #expect(counter.value == 4)
        try db.execute("SELECT 1")
        #expect(counter.value == 5)
    }
}
