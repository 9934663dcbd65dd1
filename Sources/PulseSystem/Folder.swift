#if canImport(Glibc)
import Glibc
#endif

/// An open folder, for the calls relative to it (fstatat, openat, renameat, unlinkat): a hot path that touches
/// many files of one folder (the blobs of a build) pays for no walk of the folder's path per file.
public final class Folder: Sendable {
    public let path: String
    private let descriptor: Int32

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { Glibc.close(descriptor) }

    /// Opens the folder at `path`.
    public static func open(_ path: String) throws(PathError) -> Folder {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .last("open folder", path) }
        return Folder(descriptor: fd, path: path)
    }

    /// The path of `name` in the folder (for errors).
    public func path(of name: String) -> String { path + "/" + name }

    /// stat of `name` in the folder, following a final symbolic link.
    public func info(of name: String) throws(PathError) -> FileInfo {
        var info = stat()
        guard fstatat(descriptor, name, &info, 0) == 0 else { throw .last("stat", path(of: name)) }
        return FileInfo(info)
    }

    /// The size of the regular file `name`; nil when there is none.
    public func sizeOfRegularFile(_ name: String) -> Int? {
        guard let info = try? info(of: name), info.isRegularFile else { return nil }
        return info.size
    }

    /// Creates the new file `name` for writing (`File.createNew`, relative to the folder).
    public func createNew(_ name: String, mode: mode_t) throws(PathError) -> File {
        try File.createNew(name, in: descriptor, path: path(of: name), mode: mode)
    }

    /// Renames `name` to `newName` in the folder, replacing what `newName` was. Errors name `newName`.
    public func rename(_ name: String, to newName: String) throws(PathError) {
        guard renameat(descriptor, name, descriptor, newName) == 0 else { throw .last("rename", path(of: newName)) }
    }

    /// Removes the file `name`.
    public func remove(_ name: String) throws(PathError) {
        guard unlinkat(descriptor, name, 0) == 0 else { throw .last("remove", path(of: name)) }
    }

    /// fsync of the folder: the names created, renamed and removed in it survive a crash.
    public func sync() throws(PathError) {
        guard fsync(descriptor) == 0 else { throw .last("fsync folder", path) }
    }
}
