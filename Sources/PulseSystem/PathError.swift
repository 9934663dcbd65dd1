/// A failed system call on a file or folder: what was done, where, and the system's reason, shown as
/// `path: operation: reason` (Go's `os.PathError`, as restic's `internal/fs` returns it).
public struct PathError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was being done, in a few words (`rename`, `cannot create a file`).
    public var operation: String
    /// The file or folder at fault.
    public var path: String
    public var errno: Errno

    public init(_ operation: String, path: String, errno: Errno) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// The error of the call that just failed: `errno` is read now.
    static func last(_ operation: String, _ path: String) -> PathError { PathError(operation, path: path, errno: .current) }

    public var description: String { "\(path): \(operation): \(errno)" }
}
