import Foundation
import PulseCrypto
import PulseServer
import PulseServerStorage
import PulseSQLite
import PulseSystem

/// `pulse-server backup`: a consistent copy of a data folder, taken while servers go on serving from it.
///
/// The database is copied by SQLite's online backup API from one read snapshot (`Database.backup`), so the copy
/// holds exactly the transactions committed before it began, whatever is written meanwhile; the device
/// certificate key is added to it, so the copy is all a restored server needs. It is written under a temp name
/// beside the target, labelled, checked (`BackupFile.inspect`: integrity, label, schema version), fsynced and
/// renamed over the target: a failed or killed backup leaves any previous file whole.
public enum DataFolderBackup {
    /// Backs up the data folder at `path` to `target`.
    /// - Parameter now: Unix seconds, recorded in the backup.
    /// - Throws: `ServerError` with one line starting `backup:`.
    public static func create(from path: String, to target: String, now: Int64) throws -> BackupFile {
        let folder = try prefixed("backup", { try DataFolder.existing(path) })
        let database = folder.databasePath
        let size = (try? FileManager.default.attributesOfItem(atPath: database)[.size] as? Int) ?? 0
        guard size > 0 else { throw ServerError(.notFound, "backup: \(folder.url.path) holds no pulse-server database") }
        guard let lock = try prefixed("backup", { try folder.lock(.shared) }) else {
            throw ServerError(.unavailable, "backup: \(folder.url.path) is being restored; back it up when the restore has finished")
        }
        defer { lock.release() }
        var key = try certificateKey(of: folder) ?? []
        let hasKey = !key.isEmpty
        defer { SecretBytes.wipe(&key) }

        let temp = FileSystem.tempPath(beside: target)
        var installed = false
        defer { if !installed { for path in [temp, temp + "-journal"] { _ = try? FileSystem.removeIfPresent(path) } } }
        let schemaVersion: Int
        do {
            let source = try Database(path: database, flags: [.readOnly, .noMutex, .noFollow])
            // One read transaction: the schema version read is the one of the snapshot copied.
            schemaVersion = try source.transaction(.deferred) { source in
                guard try source.scalarInteger("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_version'") == 1 else {
                    throw ServerError(.badInput, "backup: \(database) is not a pulse-server database (no schema_version table)")
                }
                let version = Int(try source.scalarInteger("SELECT max(version) FROM schema_version") ?? 0)
                guard version <= SQLiteStorage.schemaVersion else {
                    throw ServerError(.badInput,
                        "backup: \(database) has schema version \(version), newer than this pulse-server knows (\(SQLiteStorage.schemaVersion)); use a newer version")
                }
                do throws(SQLiteError) { try source.backup(to: temp) } catch {
                    guard error.message.hasPrefix("cannot create the copy") else { throw error }
                    throw ServerError(.storage, "backup: \(target): cannot write beside it: \(error.message.dropFirst("cannot create the copy: ".count))")
                }
                return version
            }
            let copy = try Database(path: temp, options: singleFile)
            try BackupFile.label(copy, schemaVersion: schemaVersion, createdAt: now, source: folder.url.path, certificateKey: hasKey ? key : nil)
        } catch let error as SQLiteError {
            throw ServerError(.storage, "backup: \(target): \(error)")
        }
        let checked = try BackupFile.inspect(temp, action: "backup")
        do throws(PathError) {
            try TempFile(adopting: File.open(temp, .readWrite)).finish(mode: 0o600)
            try FileSystem.rename(temp, to: target)
            installed = true
            try FileSystem.syncFolder(folderPath(of: target))
        } catch {
            throw ServerError(.storage, "backup: \(error)")
        }
        return checked.renamed(target)
    }

    /// Connection options for a file of its own: no WAL (a rollback journal, deleted at each commit).
    static var singleFile: Database.Options {
        var options = Database.Options()
        options.writeAheadLog = false
        return options
    }

    /// The folder's certificate key as PEM bytes, checked, or nil when it has none; the caller wipes it.
    private static func certificateKey(of folder: DataFolder) throws -> [UInt8]? {
        guard try prefixed("backup", { try DeviceCertificateKey.existing(in: folder) }) != nil else { return nil }
        do { return Array(try Data(contentsOf: URL(fileURLWithPath: folder.certificateKeyPath))) } catch {
            throw ServerError(.storage, "backup: \(folder.certificateKeyPath): cannot read: \((error as NSError).localizedDescription)")
        }
    }

    /// `body`, with "backup: " before the message of a `ServerError` it throws.
    static func prefixed<T>(_ action: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as ServerError {
            throw ServerError(error.kind, "\(action): \(error.message)")
        }
    }

    /// The folder part of `path` ("." for a bare name).
    static func folderPath(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
