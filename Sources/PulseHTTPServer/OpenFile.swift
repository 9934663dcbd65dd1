import Foundation
import PulseSystem
import Synchronization

/// A failed system call, with the text of its errno.
public struct SystemError: Error, CustomStringConvertible, Equatable {
    public var operation: String
    public var path: String
    public var code: Int32

    public init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    public var description: String { "\(path): \(operation): \(Errno(code))" }
}

/// What identifies one version of a file: if any of these change, the bytes may have changed. The change time
/// is the part nobody can set back: `touch -r` or `utime` restore the modification time after an edit in place,
/// but every write and every such restore sets the change time to now.
public struct FileStatus: Sendable, Equatable {
    /// What kind of file it is.
    public enum Kind: Sendable, Equatable {
        case regular, directory, symbolicLink, fifo, socket, device
    }

    public var device: UInt64
    public var inode: UInt64
    public var size: Int
    public var modifiedSeconds: Int
    public var modifiedNanoseconds: Int
    public var changedSeconds: Int
    public var changedNanoseconds: Int
    public var kind: Kind

    public var isRegularFile: Bool { kind == .regular }

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int(info.st_size)
        modifiedSeconds = Int(info.st_mtim.tv_sec)
        modifiedNanoseconds = Int(info.st_mtim.tv_nsec)
        changedSeconds = Int(info.st_ctim.tv_sec)
        changedNanoseconds = Int(info.st_ctim.tv_nsec)
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFIFO: kind = .fifo
        case S_IFSOCK: kind = .socket
        default: kind = .device
        }
    }

    /// stat(2) of `path` (following a final symbolic link).
    public static func of(path: String) throws(SystemError) -> FileStatus {
        var info = stat()
        guard stat(path, &info) == 0 else { throw SystemError(operation: "stat", path: path, code: errno) }
        return FileStatus(info)
    }

    /// lstat(2) of `path`: a symbolic link is reported as one.
    public static func ofLink(path: String) throws(SystemError) -> FileStatus {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw SystemError(operation: "stat", path: path, code: errno) }
        return FileStatus(info)
    }
}

/// An open, read-only file descriptor, closed in `deinit` unless the server took it over to send it.
public final class OpenFile: Sendable {
    public let path: String
    /// fstat of the open descriptor: the identity of exactly the bytes that will be read.
    public let status: FileStatus
    /// The descriptor; -1 once the server took it over.
    private let fd: Mutex<Int32>

    /// Opens `path` read-only, never blocking and never following a final symbolic link (ELOOP): a FIFO, a
    /// device or a socket opens at once (or fails) instead of blocking the thread, and `status` (from the
    /// descriptor) tells what it is before anything is read.
    public init(path: String) throws(SystemError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY)
        guard fd >= 0 else { throw SystemError(operation: "open", path: path, code: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw SystemError(operation: "fstat", path: path, code: code)
        }
        self.path = path
        self.fd = Mutex(fd)
        self.status = FileStatus(info)
    }

    deinit {
        let fd = self.fd.withLock { $0 }
        if fd >= 0 { close(fd) }
    }

    var descriptor: Int32 { fd.withLock { $0 } }

    /// Hands the descriptor over (to libmicrohttpd, which closes it); nil if it was already taken.
    func take() -> Int32? {
        fd.withLock { fd in
            guard fd >= 0 else { return nil }
            defer { fd = -1 }
            return fd
        }
    }

    /// Up to `count` bytes from `offset` (fewer only at the end of the file).
    public func read(at offset: Int, count: Int) throws(SystemError) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { throw SystemError(operation: "read", path: path, code: errno) }
            if got == 0 { break }
            done += got
        }
        chunk.removeLast(count - done)
        return chunk
    }
}
