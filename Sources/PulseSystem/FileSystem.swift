#if canImport(Glibc)
import Glibc
#endif

/// The calls on paths (unlink, rename, link, mkdir, chmod, access), each throwing a `PathError` with the
/// system's reason; `FileSystem+Atomic.swift` builds the all-or-nothing writes from them.
public enum FileSystem {
    /// Removes the file at `path`.
    public static func remove(_ path: String) throws(PathError) {
        guard unlink(path) == 0 else { throw .last("remove", path) }
    }

    /// Removes the file at `path` if there is one; false when there was none.
    @discardableResult
    public static func removeIfPresent(_ path: String) throws(PathError) -> Bool {
        guard unlink(path) == 0 else {
            if errno == ENOENT { return false }
            throw .last("remove", path)
        }
        return true
    }

    /// Renames `source` to `destination`, replacing what was there, in one step. Errors name `destination`.
    public static func rename(_ source: String, to destination: String) throws(PathError) {
        guard Glibc.rename(source, destination) == 0 else { throw .last("rename", destination) }
    }

    /// A second name, `name`, for the file at `existing`; fails with `Errno.exists` when anything is at `name`
    /// (unlike a rename, a link never replaces). Errors name `name`.
    public static func link(_ existing: String, as name: String) throws(PathError) {
        guard Glibc.link(existing, name) == 0 else { throw .last("link", name) }
    }

    /// Creates the folder `path` with permission `mode` (less the umask); false when something is there already.
    @discardableResult
    public static func makeFolder(_ path: String, mode: mode_t) throws(PathError) -> Bool {
        guard mkdir(path, mode) == 0 else {
            if errno == EEXIST { return false }
            throw .last("mkdir", path)
        }
        return true
    }

    /// chmod(2): sets the permission bits of `path` to exactly `mode`.
    public static func setPermissions(_ path: String, _ mode: mode_t) throws(PathError) {
        guard chmod(path, mode) == 0 else { throw .last("chmod", path) }
    }

    /// What a process may do with a file (access(2)).
    public struct Access: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public static let read = Access(rawValue: R_OK)
        public static let write = Access(rawValue: W_OK)
        /// Run a file, or enter a folder.
        public static let search = Access(rawValue: X_OK)
    }

    /// Throws unless this process (by its real user) may do `access` with `path`.
    public static func checkAccess(_ path: String, _ access: Access) throws(PathError) {
        guard Glibc.access(path, access.rawValue) == 0 else { throw .last("access", path) }
    }

    /// True when this process may do `access` with `path`.
    public static func isAccessible(_ path: String, _ access: Access) -> Bool {
        (try? checkAccess(path, access)) != nil
    }

    /// fsync of the folder at `path`, so that a rename or a link in it survives a crash.
    public static func syncFolder(_ path: String) throws(PathError) {
        try Folder.open(path).sync()
    }
}
