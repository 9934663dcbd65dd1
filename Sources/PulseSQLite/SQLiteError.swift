import CSQLite

/// The one error type of PulseSQLite: a SQLite result code with SQLite's own message.
///
/// The message comes from `sqlite3_errmsg` (or `sqlite3_errstr` when there is no connection), so it
/// names the table, column or constraint at fault. Bound values never appear in it: statements take
/// every value through a parameter, so a token or key cannot end up in an error line.
public struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE`, `SQLITE_BUSY_SNAPSHOT`, …).
    public let extendedCode: Int32
    /// SQLite's message, or ours for a misuse of the wrapper.
    public let message: String
    /// What was being done: `open`, `prepare`, `step`, `bind`, `BEGIN IMMEDIATE`, …
    public let operation: String

    public init(extendedCode: Int32, message: String, operation: String) {
        self.extendedCode = extendedCode
        self.message = message
        self.operation = operation
    }

    /// The primary result code (`SQLITE_CONSTRAINT`, `SQLITE_BUSY`, …).
    public var code: Int32 { extendedCode & 0xff }

    /// A UNIQUE, PRIMARY KEY, CHECK, NOT NULL or FOREIGN KEY constraint refused the change.
    public var isConstraintViolation: Bool { code == SQLITE_CONSTRAINT }

    /// Another connection held a lock longer than the busy timeout.
    public var isBusy: Bool { code == SQLITE_BUSY || code == SQLITE_LOCKED }

    public var description: String { "sqlite: \(operation): \(message) (code \(extendedCode))" }

    /// The error the connection reports for `code`.
    static func from(_ connection: OpaquePointer?, code: Int32, operation: String) -> SQLiteError {
        let message: String
        if let connection, let text = sqlite3_errmsg(connection) {
            message = String(cString: text)
        } else if let text = sqlite3_errstr(code) {
            message = String(cString: text)
        } else {
            message = "unknown error"
        }
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        // errmsg can describe a later call on the same connection; keep the code we were given.
        return SQLiteError(extendedCode: extended & 0xff == code & 0xff ? extended : code, message: message, operation: operation)
    }

    /// A misuse of the wrapper (wrong column type, a nested transaction): SQLITE_MISUSE with our text.
    static func misuse(_ message: String, operation: String) -> SQLiteError {
        SQLiteError(extendedCode: SQLITE_MISUSE, message: message, operation: operation)
    }
}
