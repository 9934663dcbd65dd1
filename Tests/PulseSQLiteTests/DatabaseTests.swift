import Foundation
import Testing
import PulseSQLite
import PulseTestSupport

@Suite struct DatabaseTests {
    @Test func valuesRoundTripExactly() throws {
        let folder = try TestFolder()
        let database = try folder.openDatabase()
        try database.execute("CREATE TABLE t (a, b, c, d, e, f, g)")
        let values: [SQLiteValue] = [
            .integer(Int64.min), .real(-0.5), .text(""), .text("a\u{0}b é 🙂"), .blob([]), .blob([0, 1, 255]), .null,
        ]
        try database.cached("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)").run(values)
        let read = try database.cached("SELECT a, b, c, d, e, f, g FROM t").first { row in (0..<7).map { row.value(Int32($0)) } }
        // An empty blob reads back as an empty BLOB (zeroblob(0)), never NULL; empty text stays text.
        #expect(read == values)
        #expect(try database.scalarText("SELECT typeof(c) || typeof(e) FROM t") == "textblob")
    }

    @Test func connectionIsConfiguredForDurabilityAndIntegrity() throws {
        let folder = try TestFolder()
        let database = try folder.openDatabase()
        #expect(try database.scalarText("PRAGMA journal_mode") == "wal")
        #expect(try database.scalarInteger("PRAGMA synchronous") == 2)  // FULL
        #expect(try database.scalarInteger("PRAGMA foreign_keys") == 1)
        #expect(try database.scalarInteger("PRAGMA busy_timeout") == 10_000)

        var normal = Database.Options()
        normal.synchronous = .normal
        #expect(try folder.openDatabase(normal).scalarInteger("PRAGMA synchronous") == 1)
    }

    @Test func constraintViolationIsOneTypedErrorWithSQLitesMessage() throws {
        let folder = try TestFolder()
        let database = try folder.openDatabase()
        try database.execute("""
            CREATE TABLE parent (id TEXT PRIMARY KEY);
            CREATE TABLE child (parent TEXT NOT NULL REFERENCES parent(id));
            """)
        let insert = try database.cached("INSERT INTO parent VALUES (?)")
        try insert.run(["p"])
        let duplicate = #expect(throws: SQLiteError.self) { try insert.run(["p"]) }
        #expect(duplicate?.isConstraintViolation == true)
        #expect(duplicate?.message.contains("parent.id") == true)
        // The statement is usable again after the failure.
        try insert.run(["q"])

        let orphan = #expect(throws: SQLiteError.self) { try database.cached("INSERT INTO child VALUES (?)").run(["nobody"]) }
        #expect(orphan?.isConstraintViolation == true)
        #expect(orphan?.message.contains("FOREIGN KEY") == true)
    }

    @Test func wrongParameterCountAndBadSQLAreErrors() throws {
        let folder = try TestFolder()
        let database = try folder.openDatabase()
        try database.execute("CREATE TABLE t (a)")
        #expect(throws: SQLiteError.self) { try database.cached("INSERT INTO t VALUES (?)").run([1, 2]) }
        let syntax = #expect(throws: SQLiteError.self) { try database.prepare("SELEKT 1") }
        #expect(syntax?.message.contains("syntax error") == true)
        let missing = #expect(throws: SQLiteError.self) { try database.prepare("SELECT nope FROM t") }
        #expect(missing?.message.contains("no such column: nope") == true)
    }

    @Test func cachedStatementsArePreparedOnce() throws {
        let folder = try TestFolder()
        let database = try folder.openDatabase()
        #expect(try database.cached("SELECT 1") === database.cached("SELECT 1"))
        #expect(try database.prepare("SELECT 1") !== database.cached("SELECT 1"))
    }

    @Test func openingAMissingFolderFailsWithSQLitesReason() throws {
        let error = #expect(throws: SQLiteError.self) { try Database(path: "/nonexistent-\(UUID())/x.sqlite") }
        #expect(error?.message == "unable to open database file")
        #expect(error?.operation.hasPrefix("open /nonexistent-") == true)
    }

    @Test func symbolicLinksAreNotFollowed() throws {
        let folder = try TestFolder()
        _ = try folder.openDatabase()
        let link = folder.path("link.sqlite")
        #expect(symlink(folder.databasePath, link) == 0)
        #expect(throws: SQLiteError.self) { try Database(path: link) }
    }

    @Test func dataVersionMovesOnlyForOtherConnectionsCommits() throws {
        let folder = try TestFolder()
        let watcher = try folder.openDatabase()
        let writer = try folder.openDatabase()
        try writer.execute("CREATE TABLE t (a)")
        let before = try watcher.dataVersion()
        try watcher.execute("INSERT INTO t VALUES (1)")  // its own commit: no change for itself
        #expect(try watcher.dataVersion() == before)
        try writer.execute("INSERT INTO t VALUES (2)")
        let after = try watcher.dataVersion()
        #expect(after != before)
        #expect(try watcher.dataVersion() == after)
    }

    /// The WAL index header stays as it is while nothing commits, and moves at every commit of any
    /// connection, its reader's own included: what lets a watcher skip `dataVersion` (and its file locks).
    @Test func walIndexHeaderMovesAtEveryCommitOnly() throws {
        let folder = try TestFolder()
        let watcher = try folder.openDatabase()
        let writer = try folder.openDatabase()
        try writer.execute("CREATE TABLE t (a)")
        let before = try #require(watcher.walIndexHeader())
        _ = try watcher.dataVersion()
        _ = try writer.scalarInteger("SELECT count(*) FROM t")
        #expect(watcher.walIndexHeader() == before)
        try writer.execute("INSERT INTO t VALUES (1)")
        let afterWriter = try #require(watcher.walIndexHeader())
        #expect(afterWriter != before)
        try writer.execute("INSERT INTO t VALUES (1)")  // the same change again: still a commit
        let again = try #require(watcher.walIndexHeader())
        #expect(again != afterWriter)
        try watcher.execute("INSERT INTO t VALUES (2)")
        #expect(watcher.walIndexHeader() != again)
        #expect(writer.walIndexHeader() == watcher.walIndexHeader())
    }

    /// Without a write-ahead log there is no index to read: nil (ask `dataVersion`), and no `-shm` file appears.
    @Test func noWALIndexHeaderWithoutWAL() throws {
        let folder = try TestFolder()
        var rollback = Database.Options()
        rollback.writeAheadLog = false
        let database = try folder.openDatabase(rollback)
        try database.execute("CREATE TABLE t (a)")
        #expect(database.walIndexHeader() == nil)
        #expect(!FileManager.default.fileExists(atPath: folder.databasePath + "-shm"))
    }
}
