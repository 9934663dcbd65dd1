import Foundation

/// Whole-file writes that are all-or-nothing, also across a crash or `kill -9` (restic's and the OCI image
/// layout's rule): temp file in the same folder → write → chmod → fsync → rename (or link) → fsync the folder.
extension FileSystem {
    /// Writes `bytes` to `path` with permission `mode`, replacing any file there; the previous file stays
    /// whole until the rename, and the temp file is removed on any error.
    /// - Throws: `PathError`: `cannot create a file`, `cannot write`, `open folder` or `fsync folder` (naming the
    ///   folder), `chmod` (the temp file) or `rename` (naming `path`).
    public static func replace(_ path: String, with bytes: some ContiguousBytes, mode: mode_t) throws(PathError) {
        let temp = try TempFile.create(tempPath(beside: path), with: bytes, mode: mode)
        try temp.finish()
        do throws(PathError) { try rename(temp.path, to: path) } catch {
            temp.remove()
            throw error
        }
        try syncFolder(TempFile.folder(of: path))
    }

    /// Creates `path` with `bytes` and permission `mode` unless a file is there, also one that appears meanwhile:
    /// the bytes are written and fsynced under a temporary name first, then linked to `path` (a link never
    /// replaces), so `path` never holds part of them. Never replaces anything.
    /// - Returns: false when a file was there (nothing is written then).
    /// - Throws: `PathError`: the errors of `replace`, or `link` (naming `path`).
    public static func createNew(_ path: String, with bytes: some ContiguousBytes, mode: mode_t) throws(PathError) -> Bool {
        let temp = try TempFile.create(tempPath(beside: path), with: bytes, mode: mode)
        defer { temp.remove() }
        try temp.finish()
        do throws(PathError) { try link(temp.path, as: path) } catch where error.errno == .exists {
            return false
        }
        try syncFolder(TempFile.folder(of: path))
        return true
    }

    /// `<folder>/.tmp-<name>-<UUID>`: a temp name beside `path`, in the same folder (so a rename is atomic) and
    /// recognisable as unfinished (`.tmp-`), for a cleanup after a crash.
    public static func tempPath(beside path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        return "\(folder).tmp-\(name)-\(UUID().uuidString)"
    }
}
