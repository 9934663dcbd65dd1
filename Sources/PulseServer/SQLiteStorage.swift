import Foundation
import PulseSQLite
import Synchronization

/// `ServerStorage` on one SQLite file (WAL, synchronous=FULL): a pool of connections for requests,
/// one more connection only to watch `PRAGMA data_version`.
public final class SQLiteStorage: ServerStorage {
    let pool: DatabasePool
    private let watcher: Mutex<Watcher>
    /// Writers of this process queue here rather than in SQLite's busy handler, which polls with sleeps
    /// of 1 to 100 ms: under contention a writer could sleep past the moment the lock was free.
    private let writers = NSLock()
    /// The database file.
    public let path: String

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
    /// (no I/O when nothing changed); only then is the generation row read again.
    struct Watcher: ~Copyable {
        let database: Database
        var dataVersion: Int64? = nil
        var generation: Int64 = 0
    }

    public func generation() throws -> StorageGeneration {
        try watcher.withLock { watcher in
            try Self.mapped {
                let version = try watcher.database.dataVersion()
                if version != watcher.dataVersion {
                    // Read after data_version: the value is at least as new as the version it is cached under.
                    watcher.generation = try watcher.database.scalarInteger("SELECT value FROM generation WHERE id = 1") ?? 0
                    watcher.dataVersion = version
                }
                return StorageGeneration(watcher.generation)
            }
        }
    }

    /// Marks a change caches must see (inside the caller's write transaction).
    static func bumpGeneration(on db: Database) throws {
        try db.cached("UPDATE generation SET value = value + 1 WHERE id = 1").run()
    }

    /// Runs a read on a pooled connection.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try Self.mapped { try pool.withConnection(body) }
    }

    /// Runs a write transaction (BEGIN IMMEDIATE) on a pooled connection. A body whose change caches
    /// must see calls `bumpGeneration`.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try Self.mapped {
            try pool.withConnection { database in try writers.withLock { try database.transaction(.immediate, body) } }
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
