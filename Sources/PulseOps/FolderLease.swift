import Foundation
import PulseStore
import Synchronization

/// A lease on a folder target: an flock on `<folder>/.lock`. The kernel releases it when its
/// holder exits, also on `kill -9`, so it needs no expiry and never lapses while its holder lives. The
/// holder writes who it is into the file for whoever finds it taken; the file itself stays.
final class FolderLease: TargetLease {
    private let fd: Int32
    private let released = Atomic(false)

    static let fileName = ".lock"

    private init(fd: Int32) { self.fd = fd }

    /// Takes the lease of `root` (which must exist) for `operation`, waiting up to `wait` seconds.
    static func acquire(root: URL, operation: String, wait: TimeInterval) throws -> FolderLease {
        let path = root.appendingPathComponent(fileName).path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StoreError.system(path, "cannot create the lock file", errno: errno) }
        do {
            let lease = try retryingLease(wait: wait, {
                guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                    guard errno == EWOULDBLOCK else { throw StoreError.system(path, "cannot lock", errno: errno) }
                    return nil
                }
                return FolderLease(fd: fd)
            }, busy: {
                let holder = LeaseHolder(Self.read(fd))
                return OpsError(.busy, path, "held by \(holder?.summary ?? "another push or gc"). Run again when it is done, or wait for it with --wait 10m")
            })
            let holder = try LeaseHolder.new(operation: operation, ttl: 0)
            let bytes = Array(holder.bytes)
            // For messages only: a failure here changes nothing about the lock.
            if ftruncate(fd, 0) == 0 { _ = pwrite(fd, bytes, bytes.count, 0) }
            return lease as! FolderLease
        } catch {
            close(fd)
            throw error
        }
    }

    private static func read(_ fd: Int32) -> Data {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = pread(fd, &buffer, buffer.count, 0)
        return count > 0 ? Data(buffer[..<count]) : Data()
    }

    /// An flock is held until its holder closes it: there is nothing to check.
    func confirm() throws {}

    func renew() throws {}

    func release() {
        guard !released.exchange(true, ordering: .relaxed) else { return }
        close(fd)
    }

    deinit { release() }
}
