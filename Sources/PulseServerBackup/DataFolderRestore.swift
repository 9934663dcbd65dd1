import Foundation
import PulseCrypto
import PulseServer
import PulseServerStorage
import PulseSQLite
import PulseSystem

/// `pulse-server restore`: a backup put back into a data folder no server is using.
///
/// The backup is checked whole before the folder is touched (`BackupFile.inspect`). The folder is locked
/// exclusively (`pulse-server.lock`: every `serve` holds it shared), so a running server's files are never
/// replaced. The database is copied under a temp name in the folder, its label and the key's copy dropped
/// (`secure_delete`, so no freed page keeps the key), checked, fsynced; the key is staged the same way. Then the
/// old database's `-wal`, `-shm` and `-journal` are removed (SQLite would replay an old WAL onto the new file), and
/// an `answer-key.pem` an older version left (the answer-signing keys are the database's, so the restored ones
/// came with it; the file would name a key of the replaced state), and the two files renamed into place, the
/// database last.
///
/// The crash window of `--replace`: a crash after the old `-wal` is removed and before the last rename leaves the
/// folder half old, half new (the old database without its WAL, or the new key beside the old database); running the
/// same restore again finishes it. Before that moment the folder is untouched (a crash leaves only `.tmp-*` files);
/// after it, the restore is complete.
public enum DataFolderRestore {
    public struct Summary: Sendable {
        public let backup: BackupFile
        public let folder: String
        /// True when a database or key was there before (`--replace`).
        public let replaced: Bool
    }

    /// Restores the backup at `file` into the data folder at `path` (created 0700 when missing).
    /// - Parameter replace: overwrite a folder that holds a database or a certificate key already.
    /// - Throws: `ServerError` with one line starting `restore:`.
    public static func run(from file: String, into path: String, replace: Bool) throws -> Summary {
        let backup = try BackupFile.inspect(file)
        let folder = try prepareFolder(path)
        guard let lock = try DataFolderBackup.prefixed("restore", { try folder.lock(.exclusive) }) else {
            throw ServerError(.conflict, "restore: \(folder.url.path) is in use by a running server; stop it first")
        }
        defer { lock.release() }
        let occupied = holdsState(folder)
        if occupied && !replace {
            throw ServerError(.conflict,
                "restore: \(folder.url.path) already holds a pulse-server database or certificate key; add --replace to overwrite it (what it holds is lost)")
        }

        let database = FileSystem.tempPath(beside: folder.databasePath)
        let keyPath = FileSystem.tempPath(beside: folder.certificateKeyPath)
        var installed = false
        defer {
            if !installed { for leftover in [database, database + "-journal", keyPath] { _ = try? FileSystem.removeIfPresent(leftover) } }
        }
        var key = try stageDatabase(from: backup, at: database, replacing: occupied) ?? []
        defer { SecretBytes.wipe(&key) }
        do throws(PathError) {
            if !key.isEmpty { try TempFile.create(keyPath, with: key, mode: 0o600).finish() }
            // No server has the folder (the lock): what an old database left beside it goes first.
            for stale in ["-wal", "-shm", "-journal"] { try FileSystem.removeIfPresent(folder.databasePath + stale) }
            try FileSystem.removeIfPresent(folder.answerKeyPath)
            if key.isEmpty {
                try FileSystem.removeIfPresent(folder.certificateKeyPath)
            } else {
                try FileSystem.rename(keyPath, to: folder.certificateKeyPath)
            }
            try FileSystem.rename(database, to: folder.databasePath)
            installed = true
            try FileSystem.syncFolder(folder.url.path)
        } catch {
            throw ServerError(.storage, "restore: \(error)")
        }
        return Summary(backup: backup, folder: folder.url.path, replaced: occupied)
    }

    /// The data folder at `path`, created 0700 when missing, its permissions checked.
    private static func prepareFolder(_ path: String) throws -> DataFolder {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        if !FileManager.default.fileExists(atPath: url.path) {
            do {
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw ServerError(.storage, "restore: \(url.path): cannot create the data folder: \((error as NSError).localizedDescription)")
            }
        }
        let folder = try DataFolderBackup.prefixed("restore") { try DataFolder.existing(url.path) }
        guard FileSystem.isAccessible(folder.url.path, [.write, .search]) else {
            throw ServerError(.storage, "restore: \(folder.url.path): cannot write in the data folder (permission denied)")
        }
        return folder
    }

    /// True when the folder holds a database with anything in it, its WAL, a certificate key, or an answer key file.
    private static func holdsState(_ folder: DataFolder) -> Bool {
        func size(_ path: String) -> Int? { (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int }
        return (size(folder.databasePath) ?? 0) > 0 || (size(folder.databasePath + "-wal") ?? 0) > 0 || size(folder.certificateKeyPath) != nil
            || size(folder.answerKeyPath) != nil
    }

    /// Copies the backup's database to `temp` (0600), drops its label, checks and fsyncs it.
    /// - Returns: the certificate key it carried (PEM), if any; the caller wipes it.
    private static func stageDatabase(from backup: BackupFile, at temp: String, replacing: Bool) throws -> [UInt8]? {
        var key: [UInt8] = []
        do {
            let source = try Database(path: backup.path, flags: [.readOnly, .noMutex, .noFollow])
            try source.backup(to: temp)
            let copy = try Database(path: temp, options: DataFolderBackup.singleFile)
            // Freed pages are zeroed: the key's copy must not linger in the database's free list.
            try copy.execute("PRAGMA secure_delete=ON")
            key = try copy.transaction { copy in
                let key = try BackupFile.certificateKey(copy)
                try copy.execute("DROP TABLE \(BackupFile.table)")
                // The restore goes in the restored audit log (a backup older than the log gets it at its upgrade).
                if try copy.scalarInteger("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'audit'") == 1 {
                    let detail = "made \(TimeText.iso(backup.createdAt)) from \(backup.source)" + (replacing ? "; replaced what the folder held" : "")
                    let actor = AuditActor.cli(user: SystemUser.name(environment: ProcessInfo.processInfo.environment))
                    try SQLiteStorage.appendAudit(
                        [AuditEntry(at: TimeText.now(), actor: actor, action: .restore, target: backup.path, detail: detail)], on: copy)
                }
                return key ?? []
            }
            try copy.setApplicationID(0)
            if let problems = try copy.integrityProblems() {
                throw ServerError(.badInput, "restore: \(backup.path) is damaged (integrity_check: \(problems.prefix(200))); it cannot be restored")
            }
            guard Int(try copy.scalarInteger("SELECT max(version) FROM schema_version") ?? 0) == backup.schemaVersion else {
                throw ServerError(.badInput, "restore: \(backup.path) changed while it was being restored; try again")
            }
        } catch let error as SQLiteError {
            SecretBytes.wipe(&key)
            throw error.message.hasPrefix("cannot create the copy")
                ? ServerError(.storage, "restore: \(temp): \(error.message)") : BackupFile.damaged(error, path: backup.path, action: "restore")
        } catch {
            SecretBytes.wipe(&key)
            throw error
        }
        do throws(PathError) {
            try TempFile(adopting: File.open(temp, .readWrite)).finish(mode: 0o600)
        } catch {
            SecretBytes.wipe(&key)
            throw ServerError(.storage, "restore: \(error)")
        }
        return key.isEmpty ? nil : key
    }
}
