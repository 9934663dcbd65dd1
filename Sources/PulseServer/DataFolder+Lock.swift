import Foundation
import PulseServerStorage
import PulseSystem

extension DataFolder {
    /// `pulse-server.lock`: every `serve` on the folder holds a shared lock on it for its lifetime (so several
    /// may run on one folder); `restore` takes it exclusively, so it never replaces the files under a server.
    /// The kernel drops the lock with its process, also on `kill -9`.
    public static let lockName = "pulse-server.lock"

    public var lockPath: String { url.appendingPathComponent(Self.lockName).path }

    /// Locks the folder (creating the lock file 0600 when missing), without waiting.
    /// - Returns: nil when another process holds a conflicting lock.
    /// - Throws: `ServerError` (`.storage`) when the lock file cannot be opened or locked.
    public func lock(_ kind: FileLock.Kind) throws -> FileLock? {
        do throws(PathError) {
            let file = try File.open(lockPath, .readWrite, creatingWith: 0o600)
            return try FileLock.acquire(file, kind, wait: .none)
        } catch {
            throw ServerError(.storage, "\(lockPath): cannot lock: \(error.errno)")
        }
    }

    /// The shared lock a server holds while it serves from the folder.
    /// - Throws: `ServerError` (`.unavailable`) while a `restore` holds the folder.
    public func lockForServing() throws -> FileLock {
        guard let lock = try lock(.shared) else {
            throw ServerError(.unavailable, "\(url.path) is being restored (\(Self.lockName) is held by pulse-server restore); start again when it has finished")
        }
        return lock
    }
}
