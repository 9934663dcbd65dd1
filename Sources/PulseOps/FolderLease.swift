import Foundation
import PulseStore
import Synchronization

/// A lease on a folder target: an flock on `<folder>/.lock`, the file there only while a push or gc
/// holds it. The kernel releases the lock when its holder exits, also on `kill -9`, so it needs no
/// expiry and never lapses while its holder lives; a killed holder leaves only the file, which the next
/// holder takes and removes. The holder writes who it is into the file for whoever finds it taken.
///
/// The file is removed on release, so a pushed folder holds nothing but the published files (a copy
/// of it is a valid public part). The holder unlinks it while still holding the lock; a waiter that
/// then gets the lock on the unlinked file sees that the path no longer leads to it and starts over.
final class FolderLease: TargetLease {
    private let fd: Int32
    private let path: String
    private let released = Atomic(false)

    static let fileName = ".lock"

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    /// Takes the lease of `root` (which must exist) for `operation`, waiting up to `wait` seconds.
    static func acquire(root: URL, operation: String, wait: TimeInterval) throws -> FolderLease {
        let path = root.appendingPathComponent(fileName).path
        var holder = Data()
        let lease = try retryingLease(wait: wait, {
            while true {
                let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
                guard fd >= 0 else { throw StoreError.system(path, "cannot create the lock file", errno: errno) }
                guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                    let code = errno
                    holder = read(fd)
                    close(fd)
                    guard code == EWOULDBLOCK else { throw StoreError.system(path, "cannot lock", errno: code) }
                    return nil
                }
                // Locked; but is it still the file at `path`? Its holder may have just removed it.
                var held = stat(), named = stat()
                if fstat(fd, &held) == 0, stat(path, &named) == 0, held.st_ino == named.st_ino, held.st_dev == named.st_dev {
                    return FolderLease(fd: fd, path: path)
                }
                close(fd)
            }
        }, busy: {
            OpsError(.busy, path, "held by \(LeaseHolder(holder)?.summary ?? "another push or gc"). Run again when it is done, or wait for it with --wait 10m")
        }) as! FolderLease
        let bytes = Array(try LeaseHolder.new(operation: operation, ttl: 0).bytes)
        // For messages only: a failure here changes nothing about the lock.
        if ftruncate(lease.fd, 0) == 0 { _ = pwrite(lease.fd, bytes, bytes.count, 0) }
        return lease
    }

    private static func read(_ fd: Int32) -> Data {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = pread(fd, &buffer, buffer.count, 0)
        return count > 0 ? Data(buffer[..<count]) : Data()
    }

    /// An flock is held until its holder closes it: there is nothing to check.
    func confirm() throws {}

    func renew() throws {}

    /// Removes the file while still holding the lock, then lets go.
    func release() {
        guard !released.exchange(true, ordering: .relaxed) else { return }
        unlink(path)
        close(fd)
    }

    deinit { release() }
}
