import PulseCore
import PulseSystem

/// A failure to read or write the package or a push target.
public struct StoreError: Error, CustomStringConvertible, Equatable {
    /// The file or folder at fault.
    public var path: String
    /// What went wrong, for example `No space left on device`.
    public var message: String

    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    /// A failed system call: `path: operation: reason`, as the error says.
    public init(_ error: PathError) {
        self.init(path: error.path, "\(error.operation): \(error.errno)")
    }

    /// `body`, whose failed system call becomes a `StoreError`.
    public static func wrapping<Result>(_ body: () throws(PathError) -> Result) throws(StoreError) -> Result {
        do { return try body() } catch { throw StoreError(error) }
    }

    /// An error from a failed system call, with the text of `errno`.
    public static func system(_ path: String, _ operation: String, errno code: Errno) -> StoreError {
        StoreError(path: path, "\(operation): \(code)")
    }

    /// `system` with a raw errno value.
    public static func system(_ path: String, _ operation: String, errno code: Int32) -> StoreError {
        system(path, operation, errno: Errno(code))
    }

    public var description: String { "\(path): \(message)" }

    /// A file that is not valid JSON: `file:line:column: not valid JSON: what`.
    public init(json error: JSONValue.SyntaxError, path: String) {
        self.init(path: "\(path):\(error.line):\(error.column)", "not valid JSON: \(error.message)")
    }
}
