/// The error type of PulseServer: one line for the operator, an exit code for the CLI, an HTTP status
/// for the staff API. Its text never holds a token, a key or a signature.
public struct ServerError: Error, Equatable, CustomStringConvertible {
    /// What went wrong, which decides the exit code and the HTTP status.
    public enum Kind: Equatable, Sendable {
        /// Bad input from the operator or a request (exit 65, HTTP 400).
        case badInput
        /// The thing named does not exist (exit 65, HTTP 404).
        case notFound
        /// The request contradicts what is stored: another package, other keys for a deck version,
        /// an advance in a state that has no frontier (exit 65, HTTP 409).
        case conflict
        /// The data folder or a file in it is unsafe to use, e.g. readable by others (exit 1, HTTP 500).
        case unsafeFile
        /// Storage failed (exit 1, HTTP 500).
        case storage
        /// The database cannot be reached right now (PostgreSQL down, restarting, or the network to it
        /// broken): nothing was decided, asking again later may work (exit 1, HTTP 503 with Retry-After).
        case unavailable
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public static func badInput(_ message: String) -> ServerError { ServerError(.badInput, message) }
    public static func notFound(_ message: String) -> ServerError { ServerError(.notFound, message) }
    public static func conflict(_ message: String) -> ServerError { ServerError(.conflict, message) }

    /// The process exit code (sysexits: 65 data error, 1 anything else).
    public var exitCode: Int32 {
        switch kind {
        case .badInput, .notFound, .conflict: 65
        case .unsafeFile, .storage, .unavailable: 1
        }
    }

    /// The HTTP status for the staff API.
    public var httpStatus: Int {
        switch kind {
        case .badInput: 400
        case .notFound: 404
        case .conflict: 409
        case .unsafeFile, .storage: 500
        case .unavailable: 503
        }
    }

    public var description: String { message }
}
