import CSQLite

/// One SQLite connection. Not shareable: use it from one thread at a time (a `DatabasePool` hands
/// each thread its own), as SQLite's own rule for a connection opened `NOMUTEX` asks.
///
/// Every connection is configured the same way on open: WAL journal, a busy timeout (a writer waits
/// for the lock instead of failing), foreign keys on, and `synchronous` as the options say (FULL by
/// default: a transaction that returned from `COMMIT` survives power loss, not only `kill -9`).
public final class Database {
    /// How to open the file.
    public struct OpenFlags: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        public static let readOnly = OpenFlags(rawValue: SQLITE_OPEN_READONLY)
        public static let readWrite = OpenFlags(rawValue: SQLITE_OPEN_READWRITE)
        public static let create = OpenFlags(rawValue: SQLITE_OPEN_CREATE)
        /// No connection-level mutex: the caller guarantees one thread at a time (our pools do).
        public static let noMutex = OpenFlags(rawValue: SQLITE_OPEN_NOMUTEX)
        /// Fail on a symbolic link instead of following it.
        public static let noFollow = OpenFlags(rawValue: 0x0100_0000)  // SQLITE_OPEN_NOFOLLOW (3.31+)
    }

    /// `PRAGMA synchronous`: when SQLite calls fsync.
    public enum Synchronous: String, Sendable {
        /// In WAL mode a commit survives a process crash but may be lost (never corrupted) on power loss.
        case normal = "NORMAL"
        /// In WAL mode the WAL is fsynced at every commit: a commit survives power loss too.
        case full = "FULL"
    }

    /// Settings applied on open.
    public struct Options: Sendable {
        /// How long a statement waits for another connection's lock before failing with SQLITE_BUSY.
        public var busyTimeoutMilliseconds: Int32 = 10_000
        public var synchronous: Synchronous = .full
        public var writeAheadLog = true
        public var foreignKeys = true

        public init() {}
    }

    let connection: Connection
    /// The path it was opened with.
    public let path: String
    private var statements: [String: Statement] = [:]
    /// True when the connection was put in WAL mode on open (`walIndexHeader` reads nothing otherwise).
    let writeAheadLog: Bool
    /// The first region of the WAL's shared index, as SQLite mapped it for this connection (`walIndexHeader`).
    var walIndex: UnsafeRawPointer?

    /// Opens (and with `.create`, creates) the database at `path` and configures it.
    /// - Throws: `SQLiteError` with SQLite's message (`unable to open database file`, …).
    public init(path: String, flags: OpenFlags = [.readWrite, .create, .noMutex, .noFollow], options: Options = Options()) throws(SQLiteError) {
        var handle: OpaquePointer?
        let result = sqlite3_open_v2(path, &handle, flags.rawValue | SQLITE_OPEN_EXRESCODE, nil)
        guard result == SQLITE_OK, let handle else {
            let error = SQLiteError.from(handle, code: result, operation: "open \(path)")
            sqlite3_close_v2(handle)
            throw error
        }
        connection = Connection(handle)
        self.path = path
        writeAheadLog = options.writeAheadLog && !flags.contains(.readOnly)
        try connection.check(sqlite3_busy_timeout(handle, options.busyTimeoutMilliseconds), "busy_timeout")
        if writeAheadLog {
            let mode = try scalarText("PRAGMA journal_mode=WAL")
            guard mode?.lowercased() == "wal" else {
                throw SQLiteError.misuse("journal_mode is \(mode ?? "unknown"), WAL was asked for", operation: "open \(path)")
            }
        }
        try execute("PRAGMA synchronous=\(options.synchronous.rawValue)")
        try execute("PRAGMA foreign_keys=\(options.foreignKeys ? "ON" : "OFF")")
    }

    /// Runs SQL without parameters (several statements separated by `;` are fine): DDL, pragmas.
    public func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(connection.pointer, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard result == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(result))
            throw SQLiteError(extendedCode: sqlite3_extended_errcode(connection.pointer), message: text, operation: Self.summary(sql))
        }
    }

    /// A new prepared statement. Prefer `cached(_:)` for statements run more than once.
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(connection: connection, sql: sql)
    }

    /// The statement for `sql`, prepared on first use and kept for the life of the connection.
    public func cached(_ sql: String) throws(SQLiteError) -> Statement {
        if let statement = statements[sql] { return statement }
        let statement = try prepare(sql)
        statements[sql] = statement
        return statement
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE on this connection.
    public var changes: Int { Int(sqlite3_changes64(connection.pointer)) }

    /// The rowid of the last successful INSERT on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(connection.pointer) }

    /// True while a transaction is open on this connection.
    public var isInTransaction: Bool { sqlite3_get_autocommit(connection.pointer) == 0 }

    /// `PRAGMA data_version`: changes whenever ANOTHER connection (in this process or another) commits.
    /// Cheap (no I/O when nothing changed): a cache checks it to know whether to reload.
    public func dataVersion() throws(SQLiteError) -> Int64 {
        try scalarInteger("PRAGMA data_version") ?? 0
    }

    /// The first column of the first row of `sql`, as text; nil for no row or NULL.
    public func scalarText(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> String? {
        try cached(sql).first(values) { $0.optionalString(0) } ?? nil
    }

    /// The first column of the first row of `sql`, as an integer; nil for no row or NULL.
    public func scalarInteger(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> Int64? {
        try cached(sql).first(values) { $0.isNull(0) ? nil : $0.int64(0) } ?? nil
    }

    /// The statement's first words, for error messages (never its values: those are parameters).
    static func summary(_ sql: String) -> String {
        let words = sql.split(whereSeparator: { $0 == " " || $0 == "\n" }).prefix(4)
        return words.joined(separator: " ")
    }
}
