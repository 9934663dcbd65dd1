import Foundation
import PulseSQLite
import PulseSystem
import Synchronization

/// `ServerStorage` on one SQLite file (WAL, synchronous=FULL): a pool of connections for requests,
/// one more connection only to watch for commits (the WAL index header, then `PRAGMA data_version`).
public final class SQLiteStorage: ServerStorage {
    let pool: DatabasePool
    private let watcher: Mutex<Watcher>
    /// Writers of this process queue here rather than in SQLite's busy handler, which polls with sleeps
    /// of 1 to 100 ms: under contention a writer could sleep past the moment the lock was free.
    private let writers = Condition(())
    /// The database file.
    public let path: String
    /// Rate limits live in this process: one box, one SQLite file (see `takeRateToken`).
    let buckets = TokenBuckets()

    /// The schema version this program migrates a SQLite file to (the last of its migrations); a file of a
    /// higher version was written by a newer pulse-server.
    public static var schemaVersion: Int { SQLiteSchema.migrations.count }

    /// Opens (creating if needed) the database at `path` and migrates it to the current schema.
    /// - Parameter connections: pool size; SQLite runs readers in parallel and queues writers.
    public init(path: String, connections: Int = 8, options: Database.Options = Database.Options()) throws {
        self.path = path
        do {
            let first = try Database(path: path, options: options)
            try first.migrate(SQLiteSchema.migrations)
            watcher = Mutex(Watcher(database: try Database(path: path, options: options)))
            pool = DatabasePool(capacity: connections) { try Database(path: path, options: options) }
            try pool.withConnection { _ in }  // fail now, not on the first request
        } catch {
            throw Self.serverError(error)
        }
    }

    /// A connection used only to watch: `PRAGMA data_version` moves on any other connection's commit
    /// (no I/O when nothing changed); only then is the generation row read again. Before it, the WAL index
    /// header: while that is unchanged no connection has committed, and the answer is the one held, without
    /// the read transaction (file locks) `data_version` takes.
    struct Watcher: ~Copyable {
        let database: Database
        var dataVersion: Int64? = nil
        /// The WAL index header read just before `dataVersion`: a commit after that read moves it again.
        var header: WALIndexHeader? = nil
        var generation = StorageGeneration(0)
    }

    public func generation() throws -> StorageGeneration {
        try watcher.withLock { watcher in
            let header = watcher.database.walIndexHeader()
            if let header, header == watcher.header { return watcher.generation }
            return try Self.mapped {
                let version = try watcher.database.dataVersion()
                if version != watcher.dataVersion {
                    // Read after data_version: the value is at least as new as the version it is cached under.
                    watcher.generation = try watcher.database.cached(
                        "SELECT value, credentials, devices, sessions, content FROM generation WHERE id = 1"
                    ).first { row in
                        StorageGeneration(row.int64(0), credentials: row.int64(1), devices: row.int64(2), sessions: row.int64(3), content: row.int64(4))
                    } ?? StorageGeneration(0)
                    watcher.dataVersion = version
                }
                watcher.header = header
                return watcher.generation
            }
        }
    }

    /// Marks a change caches must see (inside the caller's write transaction), and which kinds moved.
    static func bumpGeneration(_ kinds: StorageGeneration.Kinds, on db: Database) throws {
        var columns = "value = value + 1"
        if kinds.contains(.credentials) { columns += ", credentials = credentials + 1" }
        if kinds.contains(.devices) { columns += ", devices = devices + 1" }
        if kinds.contains(.sessions) { columns += ", sessions = sessions + 1" }
        if kinds.contains(.content) { columns += ", content = content + 1" }
        try db.cached("UPDATE generation SET \(columns) WHERE id = 1").run()
    }

    /// Runs a read on a pooled connection.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try Self.mapped { try pool.withConnection(body) }
    }

    /// Runs a write transaction (BEGIN IMMEDIATE) on a pooled connection. A body whose change caches
    /// must see calls `bumpGeneration`.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try Self.mapped {
            try pool.withConnection { database in try writers.withLock { _ in try database.transaction(.immediate, body) } }
        }
    }

    /// SQLite errors become `ServerError(.storage)`; every other error passes through.
    static func mapped<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as SQLiteError { throw serverError(error) }
    }

    static func serverError(_ error: any Error) -> any Error {
        guard let error = error as? SQLiteError else { return error }
        return ServerError(.storage, "database \(error)")
    }
}
