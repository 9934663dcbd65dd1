import Foundation
import PulseSystem

/// An exclusive lock on a package folder (flock on `.lock`), so two builds never interleave.
/// Released when the process exits, also on `kill -9`.
public final class PackageLock {
    private let lock: FileLock

    /// Takes the lock, waiting at most `patience` seconds for it.
    ///
    /// The short wait is not for another build (that one may take minutes: we say so at once after the
    /// wait) but for a lock that is already being released: a flock belongs to the open file description,
    /// and a process that this one spawns at that moment (`posix_spawn` copies the descriptor table, and
    /// `O_CLOEXEC` only closes it at `exec`) holds it for the microseconds until its `exec`.
    /// - Throws: `StoreError` if another process still holds it, or the lock file cannot be created.
    public init(_ package: PulsePackage, patience: Double = 1) throws {
        let file: File
        do throws(PathError) { file = try File.open(package.lockURL.path, .readWrite, creatingWith: 0o644) } catch {
            throw StoreError.system(package.root.path, "cannot create lock file", errno: error.errno)
        }
        guard let lock = try? FileLock.acquire(file, wait: .seconds(patience)) else {
            throw StoreError(path: package.root.path, "another pulse-pack is working on this package")
        }
        self.lock = lock
    }
}
