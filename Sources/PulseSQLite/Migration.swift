/// One step of a database schema: the SQL that takes it from `version - 1` to `version`.
public struct Migration: Sendable {
    public let version: Int
    public let sql: String

    public init(version: Int, sql: String) {
        self.version = version
        self.sql = sql
    }
}

extension Database {
    /// Brings the schema up to the last of `migrations` (versions 1, 2, 3, … in order), recording the
    /// version in `schema_version`.
    ///
    /// The write lock is taken first (`BEGIN IMMEDIATE`), then the version is read: two processes
    /// starting together on an old database queue on the lock, the first migrates, the second finds
    /// the new version and does nothing. A migration that fails rolls back completely.
    /// - Returns: the version before and after.
    /// - Throws: `SQLiteError`, also when the file's schema is newer than any migration given.
    @discardableResult
    public func migrate(_ migrations: [Migration]) throws -> (from: Int, to: Int) {
        for (index, migration) in migrations.enumerated() where migration.version != index + 1 {
            preconditionFailure("migrations must be numbered 1, 2, 3, …; found \(migration.version) at position \(index + 1)")
        }
        return try transaction(.immediate) { database in
            try database.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            let current = Int(try database.scalarInteger("SELECT max(version) FROM schema_version") ?? 0)
            guard current <= migrations.count else {
                throw SQLiteError.misuse(
                    "the database has schema version \(current), newer than this program knows (\(migrations.count)); use a newer version",
                    operation: "migrate \(database.path)")
            }
            for migration in migrations.dropFirst(current) {
                try database.execute(migration.sql)
                try database.cached("INSERT INTO schema_version (version) VALUES (?)").run([.int(migration.version)])
            }
            return (current, migrations.count)
        }
    }
}
