import Foundation
import PulseStore
import PulseSystem
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
    private let lock: FileLock
    private let path: String
    private let released = Atomic(false)

    static let fileName = ".lock"

    private init(lock: FileLock, path: String) {
        self.lock = lock
        self.path = path
    }

    /// Takes the lease of `root` (which must exist) for `operation`, waiting up to `wait` seconds.
    static func acquire(root: URL, operation: String, wait: TimeInterval) throws -> FolderLease {
        let path = root.appendingPathComponent(fileName).path
        var holder = Data()
        let lease = try retryingLease(wait: wait, {
            while true {
                let file: File
                do throws(PathError) { file = try File.open(path, .readWrite, creatingWith: 0o644) } catch {
                    throw StoreError.system(path, "cannot create the lock file", errno: error.errno)
                }
                let lock: FileLock
                do throws(PathError) {
                    guard let locked = try FileLock.acquire(file) else {
                        holder = Data((try? file.read(upTo: 4096, at: 0)) ?? [])
                        return nil
                    }
                    lock = locked
                } catch {
                    throw StoreError.system(path, "cannot lock", errno: error.errno)
                }
                // Locked; but is it still the file at `path`? Its holder may have just removed it.
                if let held = try? file.info(), let named = try? FileInfo.of(path), held.isSameFile(as: named) {
                    return FolderLease(lock: lock, path: path)
                }
            }
        }, busy: {
            OpsError(.busy, path, "held by \(LeaseHolder(holder)?.summary ?? "another push or gc"). Run again when it is done, or wait for it with --wait 10m")
        }) as! FolderLease
        let bytes = Array(try LeaseHolder.new(operation: operation, ttl: 0).bytes)
        // For messages only: a failure here changes nothing about the lock.
        if (try? lease.lock.file.truncate(to: 0)) != nil { try? lease.lock.file.write(bytes, at: 0) }
        return lease
    }

    /// An flock is held until its holder closes it: there is nothing to check.
    func confirm() throws {}

    func renew() throws {}

    /// Removes the file while still holding the lock, then lets go.
    func release() {
        guard !released.exchange(true, ordering: .relaxed) else { return }
        try? FileSystem.remove(path)
        lock.release()
    }

    deinit { release() }
}
