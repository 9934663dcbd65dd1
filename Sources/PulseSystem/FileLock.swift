#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// An advisory lock on an open file (flock(2)), held until `release()` or until the lock is dropped, and
/// released by the kernel when its process dies, also on `kill -9`. It belongs to the open file description:
/// a child spawned while it is held holds it too, until its `exec` closes the descriptor (O_CLOEXEC).
public final class FileLock: Sendable {
    /// Many holders may share a lock; an exclusive one has a single holder.
    public enum Kind: Sendable {
        case shared, exclusive
    }

    /// How long `acquire` waits for another holder to let go.
    public enum Wait: Sendable {
        /// Try once.
        case none
        /// Try again every 10 ms until then.
        case seconds(Double)
        /// Block until the lock is free.
        case forever
    }

    /// The locked file: its contents are the holder's to use (who holds it, for whoever finds it taken).
    public let file: File

    private init(file: File) { self.file = file }

    /// Locks `file` (taking it over: the lock holds it open).
    /// - Returns: nil when another process still holds a conflicting lock after `wait`.
    /// - Throws: `PathError` (`lock`) when flock fails for another reason.
    public static func acquire(_ file: File, _ kind: Kind = .exclusive, wait: Wait = .none) throws(PathError) -> FileLock? {
        let operation = kind == .exclusive ? LOCK_EX : LOCK_SH
        switch wait {
        case .forever:
            while let failure = file.flock(operation) {
                guard failure == .interrupted else { throw PathError("lock", path: file.path, errno: failure) }
            }
            return FileLock(file: file)
        case .none, .seconds:
            let deadline: Date? = if case let .seconds(seconds) = wait { Date().addingTimeInterval(seconds) } else { nil }
            while true {
                guard let failure = file.flock(operation | LOCK_NB) else { return FileLock(file: file) }
                guard failure == .wouldBlock || failure == .interrupted else {
                    throw PathError("lock", path: file.path, errno: failure)
                }
                guard let deadline, Date() < deadline else { return nil }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
    }

    /// Lets go of the lock now (closing the file).
    public func release() { try? file.close() }
}

extension File {
    /// flock(2) on the descriptor; the error, or nil once it is done.
    fileprivate func flock(_ operation: Int32) -> Errno? {
        withDescriptor { systemFlock($0, operation) == 0 ? nil : Errno.current }
    }
}

/// flock(2) (`Glibc.flock` names the C struct of the same name).
private func systemFlock(_ fd: Int32, _ operation: Int32) -> Int32 { flock(fd, operation) }
