/// One step of a database schema: the SQL that takes it from `version - 1` to `version`.
public struct PostgresMigration: Sendable {
    public let version: Int
    public let sql: String

    public init(version: Int, sql: String) {
        self.version = version
        self.sql = sql
    }
}

extension PostgresConnection {
    /// Brings the schema up to the last of `migrations` (versions 1, 2, 3, … in order), recording each
    /// version applied in `schema_version`.
    ///
    /// Everything runs in one transaction that first takes `pg_advisory_xact_lock(lockKey)`, then
    /// reads the version: several processes starting together on an old (or empty) database queue on
    /// the lock, the first migrates, the others find the new version and do nothing. DDL is
    /// transactional in PostgreSQL, so a migration that fails leaves the schema as it was.
    /// - Returns: the version before and after.
    /// - Throws: `PostgresError`, `.misuse` when the database's schema is newer than any migration given.
    @discardableResult
    public func migrate(_ migrations: [PostgresMigration], lockKey: Int64) throws -> (from: Int, to: Int) {
        for (index, migration) in migrations.enumerated() where migration.version != index + 1 {
            preconditionFailure("migrations must be numbered 1, 2, 3, …; found \(migration.version) at position \(index + 1)")
        }
        return try transaction { connection in
            _ = try connection.query("SELECT pg_advisory_xact_lock($1)", [.integer(lockKey)])
            // Created only when missing: CREATE … IF NOT EXISTS would need the CREATE privilege even
            // then, and a role that only reads and writes rows may run a schema that is current.
            if try connection.query("SELECT to_regclass('schema_version') IS NULL").first?.bool(0) == true {
                try connection.execute("""
                    CREATE TABLE schema_version (
                        version bigint PRIMARY KEY,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    )
                    """)
            }
            let current = try connection.query("SELECT coalesce(max(version), 0) FROM schema_version").first?.int(0) ?? 0
            guard current <= migrations.count else {
                throw PostgresError.misuse(
                    "the database has schema version \(current), newer than this program knows (\(migrations.count)); use a newer version",
                    operation: "migrate \(configuration.redacted)")
            }
            for migration in migrations.dropFirst(current) {
                try connection.execute(migration.sql)
                _ = try connection.query("INSERT INTO schema_version (version) VALUES ($1)", [.int(migration.version)])
            }
            return (current, migrations.count)
        }
    }

    /// The schema version recorded in `schema_version`: 0 for a database never migrated.
    public func schemaVersion() throws(PostgresError) -> Int {
        let exists = try query("SELECT to_regclass('schema_version') IS NOT NULL").first?.bool(0) ?? false
        guard exists else { return 0 }
        return try query("SELECT coalesce(max(version), 0) FROM schema_version").first?.int(0) ?? 0
    }
}
