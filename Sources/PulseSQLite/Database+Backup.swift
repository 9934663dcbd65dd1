#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CSQLite
import PulseSystem

extension Database {
    /// Copies this database, page by page, into a new file at `path` with SQLite's online backup API
    /// (https://sqlite.org/backup.html): a consistent copy while other connections, in this process or
    /// others, go on reading and writing.
    ///
    /// The copy is one snapshot: when no transaction is open on this connection, a read transaction is held
    /// from the first page to the last (in WAL mode that blocks no writer; it only keeps a checkpoint from
    /// overtaking it), so commits made meanwhile neither restart the copy nor land half in it. Open a
    /// `.deferred` transaction around the call to read other things in the same snapshot. The copy is made
    /// `pagesPerStep` pages at a time, yielding the processor between steps and waiting a little when the
    /// destination or source is locked, so the processes serving from the database are not starved.
    ///
    /// `path` must not exist: it is created with permission `mode` (before SQLite opens it, so its journal
    /// gets the same mode). It is written without a journal or fsyncs (a crash leaves a file to throw away,
    /// never one taken for whole: the caller fsyncs the finished copy before it renames it into place), and left in
    /// rollback-journal mode (`journal_mode=DELETE`), so it is one file. On any failure the file is removed.
    /// - Returns: the pages copied.
    /// - Throws: `SQLiteError` (`backup …`): SQLite's error of the failed step, or `unable to open` for `path`.
    @discardableResult
    public func backup(to path: String, mode: mode_t = 0o600, pagesPerStep: Int32 = 256, patience seconds: Double = 10) throws(SQLiteError) -> Int {
        precondition(pagesPerStep != 0)
        do throws(PathError) {
            try File.createNew(path, mode: mode).close()
        } catch {
            throw SQLiteError(extendedCode: SQLITE_CANTOPEN, message: "cannot create the copy: \(error.errno)", operation: "backup to \(path)")
        }
        do throws(SQLiteError) {
            var options = Options()
            options.writeAheadLog = false
            let destination = try Database(path: path, options: options)
            // The copy is a new file no one else reads until it is finished, checked and fsynced by the caller:
            // no journal and no fsync per step (a journal plus two fsyncs a step made a 140 MB copy 3× slower).
            try destination.execute("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF")
            let pages: Int
            if isInTransaction {
                pages = try copy(into: destination, pagesPerStep: pagesPerStep, patience: seconds)
            } else {
                try execute("BEGIN DEFERRED")
                defer { rollback() }  // a read transaction: nothing to commit
                // The first read opens the read transaction: the snapshot the copy is made of.
                _ = try scalarInteger("SELECT count(*) FROM sqlite_schema")
                pages = try copy(into: destination, pagesPerStep: pagesPerStep, patience: seconds)
            }
            // The source's header says WAL; the copy is a single file for whoever opens it next.
            let journal = try destination.scalarText("PRAGMA journal_mode=DELETE")
            guard journal?.lowercased() == "delete" else {
                throw SQLiteError.misuse("journal_mode is \(journal ?? "unknown"), DELETE was asked for", operation: "backup to \(path)")
            }
            return pages
        } catch {
            for leftover in [path, path + "-journal", path + "-wal", path + "-shm"] { _ = try? FileSystem.removeIfPresent(leftover) }
            throw error
        }
    }

    /// The step loop: `sqlite3_backup_step` until DONE, a pause on BUSY/LOCKED up to `patience` seconds.
    private func copy(into destination: Database, pagesPerStep: Int32, patience: Double) throws(SQLiteError) -> Int {
        let operation = "backup to \(destination.path)"
        guard let backup = sqlite3_backup_init(destination.connection.pointer, "main", connection.pointer, "main") else {
            throw SQLiteError.from(destination.connection.pointer, code: sqlite3_errcode(destination.connection.pointer), operation: operation)
        }
        var waited = 0.0
        var result = SQLITE_OK
        while true {
            result = sqlite3_backup_step(backup, pagesPerStep)
            if result == SQLITE_DONE { break }
            if result == SQLITE_OK {
                sched_yield()
                continue
            }
            if (result == SQLITE_BUSY || result == SQLITE_LOCKED) && waited < patience {
                usleep(5_000)
                waited += 0.005
                continue
            }
            break
        }
        let pages = Int(sqlite3_backup_pagecount(backup))
        // finish releases the backup and returns the error of the last step, if any.
        let finished = sqlite3_backup_finish(backup)
        guard result == SQLITE_DONE, finished == SQLITE_OK else {
            let code = result == SQLITE_DONE ? finished : result
            throw SQLiteError.from(destination.connection.pointer, code: code, operation: operation)
        }
        return pages
    }

    /// `PRAGMA integrity_check`: nil when the file is sound, else SQLite's first problems (at most `limit`).
    public func integrityProblems(limit: Int = 10) throws(SQLiteError) -> String? {
        let problems = try prepare("PRAGMA integrity_check(\(max(1, limit)))").rows { $0.optionalString(0) ?? "" }
        guard problems != ["ok"] else { return nil }
        // One line: SQLite's rows may hold line breaks ("*** in database main ***\n On tree page …").
        return problems.flatMap { $0.split(whereSeparator: \.isNewline) }.map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("***") }.joined(separator: "; ")
    }

    /// `PRAGMA application_id`: the 32-bit number a file format built on SQLite sets in the header (offset 68).
    public func applicationID() throws(SQLiteError) -> Int32 {
        Int32(truncatingIfNeeded: try scalarInteger("PRAGMA application_id") ?? 0)
    }

    /// Sets `PRAGMA application_id`.
    public func setApplicationID(_ id: Int32) throws(SQLiteError) {
        try execute("PRAGMA application_id=\(id)")
    }
}
