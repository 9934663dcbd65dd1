import Foundation
import PulsePostgres

/// `ServerStorage` on one PostgreSQL database, shared by every pulse-server instance that points at it.
///
/// - A bounded pool of connections serves the calls; a separate connection `LISTEN`s on
///   `pulse_changes`, which triggers notify in the transaction of every change caches must see.
/// - `generation()` is an in-memory counter: bumped after this instance commits such a change, and by
///   every notification (its own included) — so it costs no round trip. While the listening
///   connection is down, every call returns a new value (nothing may be served from a cache then),
///   and its reconnect bumps it once (what was missed meanwhile is unknown).
/// - Races are decided by the database as in `SQLiteStorage`: one conditional statement, or a
///   READ COMMITTED transaction that locks the row it decides on (`SELECT … FOR UPDATE`), or, for
///   imports, a transaction-scoped advisory lock (one import at a time across all instances).
/// - A server that cannot be reached is `ServerError(.unavailable)` (HTTP 503); broken connections are
///   replaced on their own as soon as the server answers again.
/// - Lists sort text with `COLLATE "C"` (byte order, as SQLite does), whatever the database's collation.
public final class PostgresStorage: ServerStorage {
    let pool: PostgresPool
    let watch: ChangeWatch
    /// The database, for messages (the password never appears in it).
    public let configuration: PostgresConfiguration
    /// The schema version found at start and the one after migrating (equal when this start migrated
    /// nothing: the schema was current, or another instance starting at the same time migrated it).
    public let schemaVersions: (found: Int, now: Int)

    /// Connects, migrates the schema (once, however many instances start together), and starts
    /// listening for changes.
    /// - Parameters:
    ///   - connections: pool size (connections are opened as they are needed).
    ///   - watchChanges: false for one-shot commands (import, admin): no listening connection, and
    ///     `generation()` then changes at every call.
    /// - Throws: `ServerError(.unavailable)` when the server cannot be reached, `.storage` for anything
    ///   else (a schema newer than this program, missing privileges), and `.unavailable` when
    ///   notifications do not come back (a pooler in transaction mode drops LISTEN).
    public init(configuration: PostgresConfiguration, connections: Int = 8, watchChanges: Bool = true) throws {
        let configuration = configuration.defaulting("application_name", "pulse-server")
        self.configuration = configuration
        do {
            let first = try PostgresConnection(configuration)
            let (found, now) = try first.migrate(PostgresSchema.migrations, lockKey: PostgresSchema.migrationLock)
            schemaVersions = (found, now)
            pool = PostgresPool(configuration: configuration, capacity: connections)
            watch = try ChangeWatch(configuration: configuration, listening: watchChanges)
        } catch {
            throw Self.serverError(error, configuration)
        }
        if watchChanges { try synchronize() }
    }

    /// Opens the database at a `postgresql://` URL.
    public convenience init(url: String, connections: Int = 8, watchChanges: Bool = true) throws {
        let configuration: PostgresConfiguration
        do { configuration = try PostgresConfiguration(url) } catch {
            throw ServerError.badInput("the database URL is not one libpq reads: \(error.message)")
        }
        try self.init(configuration: configuration, connections: connections, watchChanges: watchChanges)
    }

    /// The schema, one migration per version (the last one's version is the current schema version).
    public static let migrations = PostgresSchema.migrations

    public func generation() throws -> StorageGeneration { watch.current() }

    /// `handler` runs on the listener's thread after each notification (any instance's change, this one's
    /// included), with the kinds it moved, and after a reconnect with every kind.
    public func observeChanges(_ handler: @escaping @Sendable (StorageGeneration.Kinds) -> Void) { watch.observe(handler) }

    /// A change the caller saw with its rate token (`RequestCheck`) before its notification arrived.
    public func catchUp(_ kinds: StorageGeneration.Kinds) { watch.bump(kinds) }

    /// Returns once every change committed (by any instance) before the call is counted in
    /// `generation()`: a notification sent now arrives after all of theirs (PostgreSQL delivers
    /// notifications in commit order), so its arrival means theirs were handled.
    /// - Throws: `ServerError(.unavailable)` when it does not arrive within `timeout` seconds.
    public func synchronize(timeout: Double = 5) throws {
        let answered = try watch.synchronize(timeout: timeout) { payload in
            _ = try statement { try $0.query("SELECT pg_notify($1, $2)", [.text(PostgresSchema.channel), .text(payload)]) }
        }
        guard answered else {
            throw ServerError(.unavailable,
                "database \(configuration.redacted): change notifications did not come back within \(Int(timeout)) s "
                    + "(LISTEN needs a direct connection or a pooler in session mode)")
        }
    }

    /// One round trip (`SELECT 1`): `generation()` answers from memory, so `/healthz` asks here.
    public func checkAvailable() throws {
        _ = try read { try $0.query("SELECT 1") }
    }

    /// Round trips of this instance's pool so far (the listening connection not included).
    public var roundTrips: Int { pool.roundTrips.value }

    /// Reconnections so far: pooled connections found dead or lost in use, and the listening connection's (metrics).
    public var reconnects: (pool: Int, listener: Int) { (pool.reconnects, watch.reconnects) }

    // MARK: - Running statements

    /// Runs reads (autocommit) on a pooled connection; tried once more on a new connection when a
    /// pooled one turns out broken (a read decides nothing, so it may run twice).
    func read<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try mapped { try pool.withConnection(retryingBrokenConnection: true, body) }
    }

    /// Runs one statement that writes (atomic on its own). Never run again after a broken connection:
    /// it may have committed. A caller whose statement changed what caches hold calls `watch.bump`.
    func statement<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try writing { try pool.withConnection(body) }
    }

    /// Runs a READ COMMITTED transaction (run again after a serialization failure or deadlock, which
    /// did nothing).
    func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try writing { try pool.transaction(.readCommitted, body) }
    }

    private func writing<T>(_ body: () throws -> T) throws -> T {
        do {
            return try mapped(body)
        } catch let error as ServerError where error.kind == .unavailable {
            // The connection broke during a write: it may have committed, and its notification went to
            // the listener, which may be down too. Caches must not trust what they hold.
            watch.bump(ChangeWatch.everything)
            throw error
        }
    }

    /// PostgreSQL errors become `ServerError`; every other error passes through.
    func mapped<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as PostgresError { throw Self.serverError(error, configuration) }
    }

    static func serverError(_ error: any Error, _ configuration: PostgresConfiguration) -> any Error {
        guard let error = error as? PostgresError else { return error }
        if error.kind == .unavailable {
            return ServerError(.unavailable, "database \(configuration.redacted) unavailable: \(error.message)")
        }
        return ServerError(.storage, "database \(configuration.redacted): \(error.operation): \(error.message)" + (error.sqlState.map { " (SQLSTATE \($0))" } ?? ""))
    }
}
