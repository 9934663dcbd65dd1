import Foundation

/// Whole-file writes that are all-or-nothing, also across a crash or `kill -9`:
/// temp file in the same folder → write → fsync → chmod → rename → fsync the folder.
public enum AtomicFile {
    /// Writes `bytes` to `url` with permission `mode`; the previous file (if any) stays until the rename.
    public static func write(_ bytes: some DataProtocol, to url: URL, mode: mode_t) throws {
        let folder = url.deletingLastPathComponent()
        let temp = folder.appendingPathComponent(".tmp-\(url.lastPathComponent)-\(UUID().uuidString)")
        try writeTemp(bytes, to: temp.path, mode: mode)
        guard rename(temp.path, url.path) == 0 else {
            let code = errno
            unlink(temp.path)
            throw StoreError.system(url.path, "rename", errno: code)
        }
        try syncFolder(folder)
    }

    /// Creates `temp` (a path; it must not exist) with `bytes`, fsynced, with permission `mode`;
    /// removes it on failure.
    public static func writeTemp(_ bytes: some DataProtocol, to temp: String, mode: mode_t) throws {
        try sync(try writeUnsynced(bytes, to: temp, mode: mode), temp: temp)
    }

    /// The first half of `writeTemp`: creates `temp` with `bytes` and `mode`, not yet fsynced; returns
    /// the open file for `sync`. Removes the file on failure.
    public static func writeUnsynced(_ bytes: some DataProtocol, to temp: String, mode: mode_t) throws -> FileHandle {
        try writeUnsynced(bytes, to: temp, opened: open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600), mode: mode)
    }

    /// `writeUnsynced` for the file `name` in the open folder `folder` (`temp` is its path, for errors):
    /// no walk of the folder's path per file, which the blobs of a build otherwise pay for each blob.
    static func writeUnsynced(_ bytes: some DataProtocol, named name: String, in folder: Int32, temp: String, mode: mode_t) throws -> FileHandle {
        try writeUnsynced(bytes, to: temp, opened: openat(folder, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600), mode: mode)
    }

    private static func writeUnsynced(_ bytes: some DataProtocol, to temp: String, opened fd: Int32, mode: mode_t) throws -> FileHandle {
        guard fd >= 0 else { throw StoreError.system(folderOf(temp), "cannot create a file", errno: errno) }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: bytes)
            guard fchmod(fd, mode) == 0 else { throw StoreError.system(temp, "chmod", errno: errno) }
            return handle
        } catch {
            unlink(temp)
            throw writeError(error, temp: temp)
        }
    }

    /// The second half of `writeTemp`: fsyncs and closes the file `writeUnsynced` returned; removes it on failure.
    public static func sync(_ handle: FileHandle, temp: String) throws {
        do {
            try handle.synchronize()
            try handle.close()
        } catch {
            unlink(temp)
            throw writeError(error, temp: temp)
        }
    }

    private static func folderOf(_ path: String) -> String { String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)]) }

    private static func writeError(_ error: any Error, temp: String) -> StoreError {
        if let error = error as? StoreError { return error }
        return StoreError(path: folderOf(temp), "cannot write: \(reason(error))")
    }

    /// fsync of a folder, so that a rename in it survives a crash.
    public static func syncFolder(_ folder: URL) throws {
        let fd = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError.system(folder.path, "open folder", errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw StoreError.system(folder.path, "fsync folder", errno: errno) }
    }

    /// Creates `folder` (and parents) with `mode` if missing.
    public static func makeFolder(_ folder: URL, mode: mode_t = 0o755) throws {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder) {
            guard isFolder.boolValue else { throw StoreError(path: folder.path, "exists and is not a folder") }
            return
        }
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: Int(mode)])
        } catch {
            throw StoreError(path: folder.path, "cannot create folder: \(reason(error))")
        }
    }

    /// The system's reason behind a Foundation error ("No space left on device"), not Foundation's prose.
    public static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
        // Foundation's own words ("The operation could not be completed. The volume is read only.") say
        // neither what failed nor why in the terms of the system: use the errno text instead.
        if nsError.domain == NSCocoaErrorDomain {
            let code: Int32? = switch nsError.code {
            case NSFileNoSuchFileError, NSFileReadNoSuchFileError: ENOENT
            case NSFileReadNoPermissionError, NSFileWriteNoPermissionError: EACCES
            case NSFileWriteVolumeReadOnlyError: EROFS
            case NSFileWriteOutOfSpaceError: ENOSPC
            case NSFileWriteFileExistsError: EEXIST
            case NSFileReadTooLargeError: EFBIG
            case NSFileWriteInvalidFileNameError, NSFileReadInvalidFileNameError: EINVAL
            default: nil
            }
            if let code { return String(cString: strerror(code)) }
        }
        let text = nsError.localizedDescription
        let prefix = "The operation could not be completed. "
        return text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text
    }
}
