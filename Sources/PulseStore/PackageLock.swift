import Foundation

/// An exclusive lock on a package folder (flock on `.lock`), so two builds never interleave.
/// Released when the process exits, also on `kill -9`.
public final class PackageLock {
    private let fd: Int32

    /// Takes the lock without waiting.
    /// - Throws: `StoreError` if another process holds it or the lock file cannot be created.
    public init(_ package: PulsePackage) throws {
        let path = package.lockURL.path
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StoreError.system(package.root.path, "cannot create lock file", errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw StoreError(path: package.root.path, "another pulse-pack is working on this package")
        }
    }

    deinit { close(fd) }
}
