#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// An open file descriptor, closed when the last reference goes (or by `close()`), with the calls the project
/// makes on one: whole writes and reads at an offset that retry after a signal, fsync, fchmod, fstat, isatty.
/// Every descriptor is opened close-on-exec. Errors name the file's path.
public final class File: Sendable {
    /// The path it was opened at (for errors).
    public let path: String
    private let descriptor: Atomic<Int32>
    private let owned: Bool

    private init(descriptor: Int32, path: String, owned: Bool = true) {
        self.descriptor = Atomic(descriptor)
        self.path = path
        self.owned = owned
    }

    deinit {
        let fd = descriptor.load(ordering: .relaxed)
        if owned && fd >= 0 { _ = Glibc.close(fd) }
    }

    /// The process's standard output and error (never closed by this type).
    public static let standardOutput = File(descriptor: 1, path: "standard output", owned: false)
    public static let standardError = File(descriptor: 2, path: "standard error", owned: false)

    /// How a file is opened.
    public enum Access: Sendable {
        case readOnly, writeOnly, readWrite

        var flags: Int32 {
            switch self {
            case .readOnly: O_RDONLY
            case .writeOnly: O_WRONLY
            case .readWrite: O_RDWR
            }
        }
    }

    static func open(_ path: String, flags: Int32, mode: mode_t, operation: String) throws(PathError) -> File {
        let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .last(operation, path) }
        return File(descriptor: fd, path: path)
    }

    /// Opens the existing file at `path`.
    public static func open(_ path: String, _ access: Access = .readOnly) throws(PathError) -> File {
        try open(path, flags: access.flags, mode: 0, operation: "open")
    }

    /// Opens the file at `path`, creating it with permission `mode` (less the umask) if it is missing.
    public static func open(_ path: String, _ access: Access, creatingWith mode: mode_t) throws(PathError) -> File {
        try open(path, flags: access.flags | O_CREAT, mode: mode, operation: "open")
    }

    /// Opens the file at `path` for appending, creating it with permission `mode` if it is missing: each
    /// `write` lands at the end of the file whoever else appends, in one piece.
    public static func openForAppending(_ path: String, creatingWith mode: mode_t) throws(PathError) -> File {
        try open(path, flags: O_WRONLY | O_CREAT | O_APPEND, mode: mode, operation: "open")
    }

    /// Creates a new, empty file at `path` for writing, with permission `mode` (less the umask); fails with
    /// `Errno.exists` when anything is there, a symbolic link included (O_CREAT|O_EXCL).
    public static func createNew(_ path: String, mode: mode_t) throws(PathError) -> File {
        try open(path, flags: O_WRONLY | O_CREAT | O_EXCL, mode: mode, operation: "create")
    }

    /// `createNew` of `name` in the open folder `folder`, without a walk of the folder's path.
    static func createNew(_ name: String, in folder: Int32, path: String, mode: mode_t) throws(PathError) -> File {
        let fd = openat(folder, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .last("create", path) }
        return File(descriptor: fd, path: path)
    }

    private var fd: Int32 { descriptor.load(ordering: .relaxed) }

    /// `body` with the raw descriptor, for the other wrappers of this module.
    func withDescriptor<R>(_ body: (Int32) -> R) -> R { body(fd) }

    /// Writes all of `bytes` at the current offset (the end, for a file opened for appending).
    public func write(_ bytes: some ContiguousBytes) throws(PathError) {
        let fd = fd
        let failure: Errno? = bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + done, buffer.count - done)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return written < 0 ? .current : .ioError }
                done += written
            }
            return nil
        }
        if let failure { throw PathError("write", path: path, errno: failure) }
    }

    /// Writes all of `bytes` at `offset` (the current offset stays).
    public func write(_ bytes: some ContiguousBytes, at offset: Int) throws(PathError) {
        let fd = fd
        let failure: Errno? = bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let written = pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return written < 0 ? .current : .ioError }
                done += written
            }
            return nil
        }
        if let failure { throw PathError("write", path: path, errno: failure) }
    }

    /// Up to `count` bytes from `offset` (fewer only at the end of the file).
    public func read(upTo count: Int, at offset: Int) throws(PathError) -> [UInt8] {
        let fd = fd
        var failure: Errno?
        let bytes = [UInt8](unsafeUninitializedCapacity: max(count, 0)) { buffer, initialized in
            while initialized < buffer.count {
                let got = pread(fd, buffer.baseAddress! + initialized, buffer.count - initialized, off_t(offset + initialized))
                if got < 0 && errno == EINTR { continue }
                if got < 0 { failure = .current }
                if got <= 0 { break }
                initialized += got
            }
        }
        if let failure { throw PathError("read", path: path, errno: failure) }
        return bytes
    }

    /// Reads the file from its start to its end, or to `limit` bytes, into the start of `buffer`, and
    /// returns how many bytes it read (`limit + 1` says the file is longer than `limit`). The buffer only
    /// grows (its bytes past the count are left as they were), so one buffer read into again and again
    /// costs no allocation and no page fault once it is as large as the largest file.
    public func readAll(into buffer: inout [UInt8], limit: Int) throws(PathError) -> Int {
        let fd = fd
        let end = max(limit, 0) + 1
        var size = stat()
        let expected = fstat(fd, &size) == 0 ? min(max(Int(size.st_size), 0) + 1, end) : 0
        if buffer.count < expected { buffer.append(contentsOf: repeatElement(0, count: expected - buffer.count)) }
        var count = 0
        while count < end {
            if count == buffer.count { buffer.append(contentsOf: repeatElement(0, count: min(max(buffer.count, 1 << 16), end - count))) }
            let got = buffer.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress! + count, min(raw.count, end) - count, off_t(count))
            }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { throw .last("read", path) }
            if got == 0 { break }
            count += got
        }
        return count
    }

    /// Cuts (or extends) the file to `size` bytes.
    public func truncate(to size: Int) throws(PathError) {
        guard ftruncate(fd, off_t(size)) == 0 else { throw .last("truncate", path) }
    }

    /// fsync(2): the bytes and the size are on the disk when it returns.
    public func sync() throws(PathError) {
        guard fsync(fd) == 0 else { throw .last("fsync", path) }
    }

    /// fchmod(2): sets the permission bits to exactly `mode` (no umask).
    public func setPermissions(_ mode: mode_t) throws(PathError) {
        guard fchmod(fd, mode) == 0 else { throw .last("chmod", path) }
    }

    /// fstat(2) of the open file: the file read and written, whatever its path leads to now.
    public func info() throws(PathError) -> FileInfo {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .last("stat", path) }
        return FileInfo(info)
    }

    /// True when the file is a terminal (isatty).
    public var isTerminal: Bool { isatty(fd) == 1 }

    /// Makes this descriptor refer to what `other` has open (dup2), close-on-exec: whoever writes through this
    /// one writes there from now on, without a lock (an access log reopened after rotation).
    public func redirect(to other: File) throws(PathError) {
        guard dup2(other.fd, fd) >= 0 else { throw .last("dup2", path) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }

    /// Closes the file now (the second call does nothing). An error is the system's last word on what was
    /// written (NFS reports some write errors only here).
    public func close() throws(PathError) {
        let fd = descriptor.exchange(-1, ordering: .relaxed)
        guard owned, fd >= 0 else { return }
        guard Glibc.close(fd) == 0 else { throw .last("close", path) }
    }
}
