import Foundation

/// A file written under a temporary name, not yet fsynced: the first half of an atomic write. `finish`
/// fsyncs and closes it; after that it is renamed (or linked) to its name, and the folder fsynced. On any
/// error in between the temp file is removed, so a failure or a crash leaves at most a `.tmp-*` file.
///
/// `FileSystem.replace` and `createNew` do every step in one call; a batch (the blobs of a build) creates its
/// temp files as it goes, fsyncs them on other threads and renames them together, then fsyncs the folder once.
public final class TempFile: Sendable {
    public let path: String
    /// The open file (closed by `finish`).
    public let file: File

    private init(file: File) {
        self.file = file
        path = file.path
    }

    /// Creates `path` (nothing may be there) with `bytes` and permission `mode`. Errors: `cannot create a file`
    /// and `cannot write` name the folder, `chmod` the file.
    public static func create(_ path: String, with bytes: some ContiguousBytes, mode: mode_t) throws(PathError) -> TempFile {
        let file: File
        do throws(PathError) { file = try File.createNew(path, mode: 0o600) } catch {
            throw PathError("cannot create a file", path: folder(of: path), errno: error.errno)
        }
        return try written(file, bytes, mode: mode)
    }

    /// `create` for the file `name` in the open folder `folder`.
    public static func create(_ name: String, in folder: Folder, with bytes: some ContiguousBytes, mode: mode_t) throws(PathError)
        -> TempFile
    {
        let file: File
        do throws(PathError) { file = try folder.createNew(name, mode: 0o600) } catch {
            throw PathError("cannot create a file", path: folder.path, errno: error.errno)
        }
        return try written(file, bytes, mode: mode)
    }

    private static func written(_ file: File, _ bytes: some ContiguousBytes, mode: mode_t) throws(PathError) -> TempFile {
        let temp = TempFile(file: file)
        do throws(PathError) {
            try file.write(bytes)
        } catch {
            temp.remove()
            throw PathError("cannot write", path: folder(of: temp.path), errno: error.errno)
        }
        do throws(PathError) { try file.setPermissions(mode) } catch {
            temp.remove()
            throw error
        }
        return temp
    }

    /// A file written elsewhere under a temporary name (a download kept in `partial/`), for `finish`.
    public init(adopting file: File) {
        self.file = file
        path = file.path
    }

    /// Sets permission `mode` if given, fsyncs and closes the file; removes it on failure (`cannot write`,
    /// naming the folder; `chmod`, naming the file).
    public func finish(mode: mode_t? = nil) throws(PathError) {
        do throws(PathError) {
            if let mode { try file.setPermissions(mode) }
        } catch {
            remove()
            throw error
        }
        do throws(PathError) {
            try file.sync()
            try file.close()
        } catch {
            remove()
            throw PathError("cannot write", path: Self.folder(of: path), errno: error.errno)
        }
    }

    /// Removes the temp file (after a failure), ignoring errors.
    public func remove() {
        try? file.close()
        try? FileSystem.remove(path)
    }

    /// The folder part of `path` (all of it without a slash).
    static func folder(of path: String) -> String { String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)]) }
}
