import Foundation
import PulseSQLite
import PulseTestSupport
import Synchronization
import Testing

/// `Database.backup`: SQLite's online backup API, one snapshot while another connection writes.
@Suite struct BackupTests {
    /// Rows written in pairs (n, -n) in one transaction: every consistent snapshot sums to zero.
    private static func fill(_ database: Database, pairs: Range<Int>) throws {
        try database.transaction { database in
            let insert = try database.cached("INSERT INTO t (n, padding) VALUES (?, randomblob(900))")
            for n in pairs {
                try insert.run([.int(n + 1)])
                try insert.run([.int(-(n + 1))])
            }
        }
    }

    @Test func aCopyTakenWhileAnotherConnectionWritesIsOneConsistentSnapshot() throws {
        let folder = try TestFolder()
        let database = try folder.openDatabase()
        try database.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, padding BLOB)")
        try Self.fill(database, pairs: 0..<1500)  // some 700 pages: hundreds of steps of one page

        // A writer on its own connection commits pairs all through the copy.
        let stop = Flag()
        let path = folder.databasePath
        let writer = Thread {
            guard let other = try? Database(path: path) else { return }
            var n = 10_000
            while !stop.isSet {
                try? Self.fill(other, pairs: n..<(n + 3))
                n += 3
            }
        }
        writer.start()
        Thread.sleep(forTimeInterval: 0.05)
        let before = try #require(try database.scalarInteger("SELECT count(*) FROM t"))
        let copyPath = folder.path("copy.sqlite")
        let pages = try database.backup(to: copyPath, pagesPerStep: 1)
        let after = try #require(try database.scalarInteger("SELECT count(*) FROM t"))
        stop.set()
        Thread.sleep(forTimeInterval: 0.1)

        #expect(pages > 500)
        #expect(after > before, "the writer committed nothing while the copy was made")
        let copy = try Database(path: copyPath, flags: [.readOnly])
        #expect(try copy.integrityProblems() == nil)
        let rows = try #require(try copy.scalarInteger("SELECT count(*) FROM t"))
        #expect(rows >= before && rows % 2 == 0)
        #expect(try copy.scalarInteger("SELECT sum(n) FROM t") == 0, "the copy holds half of a transaction")
        // One file, private, in rollback-journal mode.
        #expect(try copy.scalarText("PRAGMA journal_mode") == "delete")
        let mode = try FileManager.default.attributesOfItem(atPath: copyPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(!FileManager.default.fileExists(atPath: copyPath + "-wal"))
    }

    @Test func aCopyNeverReplacesAFileAndAFailedOneLeavesNothing() throws {
        let folder = try TestFolder()
        let database = try folder.openDatabase()
        try database.execute("CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1)")
        let existing = folder.path("existing")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))
        #expect(throws: SQLiteError.self) { try database.backup(to: existing) }
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me")
        let nowhere = folder.path("missing/copy.sqlite")
        let error = #expect(throws: SQLiteError.self) { try database.backup(to: nowhere) }
        #expect(error?.message.contains("cannot create the copy") == true)
        #expect(!FileManager.default.fileExists(atPath: nowhere))
    }

    @Test func applicationIDAndIntegrityCheck() throws {
        let folder = try TestFolder()
        let database = try folder.openDatabase()
        #expect(try database.applicationID() == 0)
        try database.setApplicationID(0x506C_7342)
        #expect(try database.applicationID() == 0x506C_7342)
        try database.execute("CREATE TABLE t (n INTEGER, padding BLOB); CREATE INDEX t_n ON t (n)")
        try database.transaction { database in
            for n in 0..<400 { try database.cached("INSERT INTO t VALUES (?, randomblob(500))").run([.int(n)]) }
        }
        #expect(try database.integrityProblems() == nil)
        let copyPath = folder.path("copy.sqlite")
        try database.backup(to: copyPath)
        #expect(try Database(path: copyPath, flags: [.readOnly]).applicationID() == 0x506C_7342)

        // Bytes flipped in the middle of the copy: the check (or the read) says so.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: copyPath))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 8192))
        try handle.close()
        let damaged = try Database(path: copyPath, flags: [.readOnly])
        let problems: String? = (try? damaged.integrityProblems()) ?? "unreadable"
        #expect(problems != nil)
    }
}

/// A flag one thread sets and another reads.
private final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
