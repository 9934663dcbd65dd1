import Foundation
import PulseSQLite
import Synchronization

/// `ServerStorage` on one SQLite file (WAL, synchronous=FULL): a pool of connections for requests,
/// one more connection only to watch `PRAGMA data_version`.
public final class SQLiteStorage: ServerStorage {
    let pool: DatabasePool
    private let watcher: Mutex<Database>
    private let localWrites = Atomic<UInt64>(0)
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
            watcher = Mutex(try Database(path: path, options: options))
            pool = DatabasePool(capacity: connections) { try Database(path: path, options: options) }
            try pool.withConnection { _ in }  // fail now, not on the first request
        } catch {
            throw Self.serverError(error)
        }
    }

    public func generation() throws -> StorageGeneration {
        let external = try watcher.withLock { database in try Self.mapped { try database.dataVersion() } }
        return StorageGeneration(external: external, local: localWrites.load(ordering: .acquiring))
    }

    /// Runs a read on a pooled connection.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try Self.mapped { try pool.withConnection(body) }
    }

    /// Runs a write transaction (BEGIN IMMEDIATE) on a pooled connection; counts it for `generation`.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        let result = try Self.mapped {
            try pool.withConnection { database in try writers.withLock { try database.transaction(.immediate, body) } }
        }
        localWrites.add(1, ordering: .releasing)
        return result
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
