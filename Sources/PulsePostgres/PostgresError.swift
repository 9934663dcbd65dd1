/// The one error type of PulsePostgres: what kind of failure, PostgreSQL's SQLSTATE and primary message.
///
/// Only the primary message is kept, never DETAIL (which quotes the values of a failing row, e.g. a
/// credential hash) and never a bound value: statements take every value through a parameter. Messages
/// that come from libpq about a connection have the configuration's password replaced by `***`.
public struct PostgresError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What the caller can do about it.
    public enum Kind: Equatable, Sendable {
        /// The server cannot be reached, or the connection broke, or the server is shutting down or
        /// starting (SQLSTATE class 08, 57P01–57P03, 53300 too_many_connections, or a libpq failure
        /// without one). Nothing can be said about a statement that was in flight; try again later.
        case unavailable
        /// 23505 unique_violation: a unique index refused the row.
        case uniqueViolation
        /// 40001 serialization_failure or 40P01 deadlock_detected: the transaction was rolled back and
        /// did nothing; running it again is safe.
        case serializationFailure
        /// Any other integrity constraint (class 23: CHECK, NOT NULL, FOREIGN KEY, exclusion).
        case constraintViolation
        /// A connection string or URL libpq refuses.
        case configuration
        /// Any other error the server reported (syntax, a missing table, a type mismatch, …).
        case server
        /// A misuse of the wrapper: a result column of a type it does not decode, a nested transaction,
        /// a NUL byte in text.
        case misuse
    }

    public let kind: Kind
    /// The five-character SQLSTATE, when the server sent one.
    public let sqlState: String?
    /// PostgreSQL's (or libpq's, or our) one-line message.
    public let message: String
    /// What was being done: `connect`, `prepare SELECT …`, `BEGIN`, …
    public let operation: String
    /// The constraint at fault, for constraint violations.
    public let constraint: String?

    public init(_ kind: Kind, message: String, operation: String, sqlState: String? = nil, constraint: String? = nil) {
        self.kind = kind
        self.message = message
        self.operation = operation
        self.sqlState = sqlState
        self.constraint = constraint
    }

    public var description: String {
        "postgresql: \(operation): \(message)" + (sqlState.map { " (SQLSTATE \($0))" } ?? "")
    }

    /// True for the errors after which running the same transaction again is safe and may succeed.
    public var isRetryable: Bool { kind == .serializationFailure }

    /// The kind an SQLSTATE stands for.
    static func kind(sqlState: String) -> Kind {
        switch sqlState {
        case "23505": .uniqueViolation
        case "40001", "40P01": .serializationFailure
        case "57P01", "57P02", "57P03", "53300": .unavailable
        case _ where sqlState.hasPrefix("08"): .unavailable
        case _ where sqlState.hasPrefix("23"): .constraintViolation
        default: .server
        }
    }

    static func misuse(_ message: String, operation: String) -> PostgresError {
        PostgresError(.misuse, message: message, operation: operation)
    }
}
