#if canImport(Glibc)
import Glibc
#endif

/// What stat(2) says about a file: its kind, size, permissions, owner and identity.
public struct FileInfo: Sendable, Equatable {
    /// What kind of file it is.
    public enum Kind: Sendable, Equatable {
        case regular, folder, symbolicLink, fifo, socket, device
    }

    public var kind: Kind
    public var size: Int
    /// The permission bits (`mode & 0o7777`): 0o644, 0o700, …
    public var permissions: mode_t
    /// The owner's user id.
    public var owner: UInt32
    public var device: UInt64
    public var inode: UInt64
    /// The last modification, in seconds since 1970.
    public var modified: Double

    public var isRegularFile: Bool { kind == .regular }
    public var isFolder: Bool { kind == .folder }

    /// True when both name the same file (the same inode on the same device), whatever its name now.
    public func isSameFile(as other: FileInfo) -> Bool { device == other.device && inode == other.inode }

    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .folder
        case S_IFLNK: kind = .symbolicLink
        case S_IFIFO: kind = .fifo
        case S_IFSOCK: kind = .socket
        default: kind = .device
        }
        size = Int(info.st_size)
        permissions = info.st_mode & 0o7777
        owner = UInt32(info.st_uid)
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
    }

    /// stat(2) of `path`, following a final symbolic link.
    public static func of(_ path: String) throws(PathError) -> FileInfo {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .last("stat", path) }
        return FileInfo(info)
    }

    /// lstat(2) of `path`: a symbolic link is reported as one.
    public static func ofLink(_ path: String) throws(PathError) -> FileInfo {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw .last("stat", path) }
        return FileInfo(info)
    }

    /// The size of the regular file at `path`; nil when there is none (missing, a folder, unreadable).
    public static func sizeOfRegularFile(_ path: String) -> Int? {
        guard let info = try? of(path), info.isRegularFile else { return nil }
        return info.size
    }
}
