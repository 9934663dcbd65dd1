import Foundation
import PulsePostgres
import PulseSQLite

/// Moves a single-box event from its SQLite file into PostgreSQL (`pulse-server migrate`): every table,
/// in one PostgreSQL transaction, from one SQLite read snapshot, then checks the counts.
///
/// The SQLite file is only read (inside `BEGIN DEFERRED`, so every table comes from the same moment).
/// Replay keys that expired before `now` stay behind; everything else moves as it is: credentials with
/// their counters, devices, sessions with their frontiers, states and change sequences, venue networks,
/// manifests, gated resources, every key table, series, change logs, diagnostic samples, the audit log
/// (with their ids) and the answer-signing keys, and the data folder's device certificate key (devices hold certificates it signed; the
/// instances sign with it from then on). The target must hold no pulse-server data unless `replace` is given, which empties it in the
/// same transaction: a failure leaves it as it was.
public struct PostgresMigrator {
    /// One table: how many rows moved, and how many stayed behind on purpose (expired replay keys).
    public struct TableCount: Equatable, Sendable {
        public var table: String
        public var rows: Int
        public var leftBehind: Int = 0
    }

    let source: String
    /// The data folder's `device-cert-key.pem`; moved when it exists.
    var certificateKeyPath: String?
    let target: PostgresConfiguration
    var replace = false
    var now: Int64
    /// Rows per INSERT statement (at most 65535 parameters per statement).
    var batchRows = 500

    public init(source: String, certificateKeyPath: String?, target: PostgresConfiguration, replace: Bool = false, now: Int64, batchRows: Int = 500) {
        self.source = source
        self.certificateKeyPath = certificateKeyPath
        self.target = target
        self.replace = replace
        self.now = now
        self.batchRows = batchRows
    }

    /// The columns copied, per table, parents first (foreign keys hold at every insert).
    static let columns: [(table: String, columns: [String])] = [
        ("credentials", [
            "hash", "listing_id", "kind", "scope_kind", "scope_id", "max_devices", "devices_enrolled", "created_at", "expires_at", "used_at", "revoked_at",
            "enroll_rate", "enroll_burst", "max_streams", "staff_role", "staff_session",
        ]),
        ("devices", ["id", "public_key", "platform", "name", "scope_kind", "scope_id", "credential_hash", "enrolled_at", "revoked_at"]),
        ("sessions", [
            "id", "state", "max_shown", "rehearsal_max_shown", "allow_download", "package_id", "series_id", "package_version", "deck_version",
            "slide_count", "manifest", "gated", "change_sequence", "updated_at",
        ]),
        ("venue_networks", ["session_id", "network"]),
        ("key_tables", ["session_id", "deck_version", "package_id", "digest", "slides", "imported_at"]),
        ("series", ["id", "package_id", "package_version", "manifest", "updated_at", "generation"]),
        ("series_sessions", ["series_id", "position", "session_id"]),
        ("session_changes", ["session_id", "sequence", "at", "kind", "max_shown", "deck_version", "state", "package_version"]),
        ("replay_keys", ["key", "expires_at"]),
        ("diag_samples", ["id", "session_id", "device_id", "received_at", "build", "platform", "connection"]),
        ("audit", ["id", "at", "actor_kind", "actor_id", "role", "action", "target", "detail", "client_address", "result"]),
        ("answer_keys", ["kid", "private_key", "signs_from", "signs_until", "serial", "added_at", "ttl"]),
    ]

    /// Runs the move. - Returns: the rows per table, all checked.
    /// - Throws: `ServerError`: `.conflict` for a target holding data (without `replace`), `.badInput`
    ///   for a source that is missing or of another schema version, `.storage` for a count that does
    ///   not match (nothing is committed then).
    public func run() throws -> [TableCount] {
        let sqlite = try openSource()
        do {
            let postgres = try PostgresConnection(target.defaulting("application_name", "pulse-server migrate"))
            try postgres.migrate(PostgresSchema.migrations, lockKey: PostgresSchema.migrationLock)
            return try sqlite.transaction(.deferred) { sqlite in
                try postgres.transaction { postgres in
                    // The migration lock keeps a starting instance from migrating the schema underneath.
                    _ = try postgres.query("SELECT pg_advisory_xact_lock($1)", [.integer(PostgresSchema.migrationLock)])
                    try emptyTarget(postgres)
                    var counts: [TableCount] = []
                    for (table, columns) in Self.columns {
                        counts.append(try copy(table, columns, from: sqlite, to: postgres))
                    }
                    // New samples continue after the ids that moved.
                    _ = try postgres.query("SELECT setval(pg_get_serial_sequence('diag_samples', 'id'), coalesce(max(id), 0) + 1, false) FROM diag_samples")
                    // New audit rows too: the ids stay monotonic across the move.
                    _ = try postgres.query("SELECT setval(pg_get_serial_sequence('audit', 'id'), coalesce(max(id), 0) + 1, false) FROM audit")
                    counts.append(try copyCertificateKey(to: postgres))
                    return counts
                }
            }
        } catch let error as PostgresError {
            throw PostgresStorage.serverError(error, target)
        } catch let error as SQLiteError {
            throw ServerError(.storage, "\(source): \(error)")
        }
    }

    /// The SQLite database, which must exist and be at this program's schema version.
    private func openSource() throws -> Database {
        guard FileManager.default.fileExists(atPath: source) else {
            throw ServerError.badInput("\(source): no such database (give the data folder of a pulse-server that ran on SQLite)")
        }
        do {
            let database = try Database(path: source, flags: [.readWrite, .noMutex, .noFollow])
            let version = Int(try database.scalarInteger("SELECT max(version) FROM schema_version") ?? 0)
            guard version == SQLiteSchema.migrations.count else {
                throw ServerError.badInput(
                    "\(source) has schema version \(version), this pulse-server moves version \(SQLiteSchema.migrations.count)"
                        + (version < SQLiteSchema.migrations.count ? " (run any pulse-server command on it first, e.g. admin token list, to upgrade it)" : ""))
            }
            return database
        } catch let error as SQLiteError {
            throw ServerError(.storage, "\(source): \(error)")
        }
    }

    /// Refuses a target holding pulse-server data, or empties it when `replace` says so.
    private func emptyTarget(_ postgres: PostgresConnection) throws {
        let held = try (Self.columns.map(\.table) + ["certificate_keys"]).map { table in
            (table, try postgres.query("SELECT count(*) FROM \(table)").first?.int(0) ?? 0)
        }.filter { $0.1 > 0 }
        guard !held.isEmpty else { return }
        guard replace else {
            throw ServerError.conflict(
                "\(target.redacted) already holds pulse-server data (" + held.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
                    + "); nothing moved (pass --replace to empty it first)")
        }
        try postgres.execute("TRUNCATE " + (Self.columns.map(\.table) + ["certificate_keys"]).joined(separator: ", ") + " RESTART IDENTITY")
    }

    /// The data folder's device certificate key, when there is one, becomes the database's (the one that signs).
    private func copyCertificateKey(to postgres: PostgresConnection) throws -> TableCount {
        guard let path = certificateKeyPath, FileManager.default.fileExists(atPath: path) else {
            return TableCount(table: "certificate_keys", rows: 0)
        }
        let key = try DeviceCertificateKey.load(path)
        _ = try PostgresStorage.insert(key, at: now, on: postgres)
        let held = try postgres.query("SELECT kid FROM certificate_keys").rows.map { try $0.string(0) }
        guard held == [key.keyId] else {
            throw ServerError(.storage, "certificate_keys: \(held.count) keys in \(target.redacted) after the copy, expected the one of \(path); nothing moved")
        }
        return TableCount(table: "certificate_keys", rows: 1)
    }

    /// Copies one table in batches, then compares the counts on both sides.
    private func copy(_ table: String, _ columns: [String], from sqlite: Database, to postgres: PostgresConnection) throws -> TableCount {
        // Replay keys that expired are not worth moving: they refuse nothing any more.
        let filter = table == "replay_keys" ? " WHERE expires_at > ?" : ""
        let filterValues: [SQLiteValue] = table == "replay_keys" ? [.integer(now)] : []
        let statement = try sqlite.prepare("SELECT \(columns.joined(separator: ", ")) FROM \(table)\(filter)")
        try statement.bind(filterValues)
        defer { statement.reset() }
        var batch: [PostgresValue] = []
        var moved = 0
        while try statement.step() {
            for column in 0..<columns.count {
                batch.append(Self.value(statement.value(Int32(column)), table: table, column: columns[column]))
            }
            if batch.count >= batchRows * columns.count {
                try insert(batch, into: table, columns, on: postgres)
                moved += batch.count / columns.count
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty {
            try insert(batch, into: table, columns, on: postgres)
            moved += batch.count / columns.count
        }
        let inSource = Int(try sqlite.scalarInteger("SELECT count(*) FROM \(table)\(filter)", filterValues) ?? 0)
        let inTarget = try postgres.query("SELECT count(*) FROM \(table)").first?.int(0) ?? 0
        guard inSource == moved, inTarget == moved else {
            throw ServerError(.storage, "\(table): \(inSource) rows in \(source), \(moved) copied, \(inTarget) in \(target.redacted); nothing moved")
        }
        let all = table == "replay_keys" ? Int(try sqlite.scalarInteger("SELECT count(*) FROM replay_keys") ?? 0) : inSource
        return TableCount(table: table, rows: moved, leftBehind: all - inSource)
    }

    private func insert(_ values: [PostgresValue], into table: String, _ columns: [String], on postgres: PostgresConnection) throws {
        let rows = values.count / columns.count
        let tuples = (0..<rows).map { row in
            "(" + (1...columns.count).map { "$\(row * columns.count + $0)" }.joined(separator: ", ") + ")"
        }
        _ = try postgres.queryOnce(
            "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES " + tuples.joined(separator: ", "), values)
    }

    /// A SQLite value as PostgreSQL takes it for `column` (0/1 becomes a boolean where the schema has one).
    static func value(_ value: SQLiteValue, table: String, column: String) -> PostgresValue {
        switch value {
        case .null: return .null
        case let .integer(number) where table == "sessions" && column == "allow_download": return .bool(number != 0)
        case let .integer(number): return .integer(number)
        case let .real(number): return .double(number)
        case let .text(text): return .text(text)
        case let .blob(bytes): return .bytes(bytes)
        }
    }
}
