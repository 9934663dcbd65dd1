import Foundation
import PulseAge
import PulseCommandLine
import PulseStore
import PulseSystem

/// File reads and 0600 writes for the `keys` commands, with one-line errors.
enum KeyFiles {
    /// The whole file, refusing one over `limit` bytes without reading more than `limit + 1`.
    /// - Parameter what: what the file is, for the error ("sealed key table").
    static func read(_ url: URL, limit: Int, what: String) throws -> [UInt8] {
        let data: Data
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            data = try handle.read(upToCount: limit + 1) ?? Data()
        } catch {
            throw KeysFailure(url.path, "cannot read: \(Errno.describe(error))", code: ExitCode.failure)
        }
        guard data.count <= limit else {
            throw KeysFailure(url.path, "is over \(AgeLimits.describe(limit)), the limit for \(what)", code: ExitCode.dataError)
        }
        return Array(data)
    }

    /// Atomic write, mode 0600 (a temp file renamed over any previous one).
    static func write(_ bytes: [UInt8], to url: URL) throws {
        try AtomicFile.write(bytes, to: url, mode: 0o600)
    }

    /// Creates `url` with `bytes` and `mode`, refusing to replace an existing file even if one
    /// appears meanwhile: the content is staged atomically, then hard-linked to its name.
    static func create(_ bytes: [UInt8], at url: URL, mode: mode_t) throws {
        let exists = KeysFailure(url.path, "exists; refusing to overwrite it", code: 1)
        guard !FileManager.default.fileExists(atPath: url.path) else { throw exists }
        let created: Bool
        do throws(PathError) { created = try FileSystem.createNew(url.path, with: bytes, mode: mode) } catch where error.path == url.path {
            throw KeysFailure(url.path, error.errno.description, code: 1)  // the link
        } catch {
            throw StoreError(error)  // the staged copy
        }
        guard created else { throw exists }
    }

}
