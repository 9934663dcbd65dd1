import Foundation

/// Whole-file writes that are all-or-nothing, also across a crash or `kill -9`:
/// temp file in the same folder → write → fsync → chmod → rename → fsync the folder.
public enum AtomicFile {
    /// Writes `bytes` to `url` with permission `mode`; the previous file (if any) stays until the rename.
    public static func write(_ bytes: some DataProtocol, to url: URL, mode: mode_t) throws {
        let folder = url.deletingLastPathComponent()
        let temp = folder.appendingPathComponent(".tmp-\(url.lastPathComponent)-\(UUID().uuidString)")
        let fd = open(temp.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError.system(folder.path, "cannot create a file", errno: errno) }
        var renamed = false
        defer { if !renamed { unlink(temp.path) } }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: bytes)
            try handle.synchronize()
        } catch {
            throw StoreError(path: url.path, "cannot write: \(Self.reason(error))")
        }
        guard fchmod(fd, mode) == 0 else { throw StoreError.system(url.path, "chmod", errno: errno) }
        try handle.close()
        guard rename(temp.path, url.path) == 0 else { throw StoreError.system(url.path, "rename", errno: errno) }
        renamed = true
        try syncFolder(folder)
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
    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
        return nsError.localizedDescription
    }
}
