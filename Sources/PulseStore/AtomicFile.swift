import Foundation
import PulseSystem

/// PulseSystem's all-or-nothing writes for the package's URLs, failing with `StoreError`: temp file in the
/// same folder → write → chmod → fsync → rename (or link) → fsync the folder, also across a crash or `kill -9`.
public enum AtomicFile {
    /// Writes `bytes` to `url` with permission `mode`; the previous file (if any) stays until the rename.
    public static func write(_ bytes: some ContiguousBytes, to url: URL, mode: mode_t) throws {
        try StoreError.wrapping { () throws(PathError) in try FileSystem.replace(url.path, with: bytes, mode: mode) }
    }

    /// Creates `url` with `bytes` and `mode` unless a file is there (also one that appears meanwhile); never
    /// replaces one, and never leaves part of the bytes under the name.
    /// - Returns: false when a file was there.
    public static func create(_ bytes: some ContiguousBytes, at url: URL, mode: mode_t) throws -> Bool {
        try StoreError.wrapping { () throws(PathError) in try FileSystem.createNew(url.path, with: bytes, mode: mode) }
    }

    /// fsync of a folder, so that a rename in it survives a crash.
    public static func syncFolder(_ folder: URL) throws {
        try StoreError.wrapping { () throws(PathError) in try FileSystem.syncFolder(folder.path) }
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
            throw StoreError(path: folder.path, "cannot create folder: \(Errno.describe(error))")
        }
    }
}
