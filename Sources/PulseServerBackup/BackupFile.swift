import Foundation
import PulseCrypto
import PulseServerStorage
import PulseSQLite

/// A pulse-server backup: one SQLite file, the data folder's database as SQLite's online backup API copied it,
/// plus a `pulse_backup` table (one row: the format, the schema version, when and from where it was made, and the
/// device certificate key), marked in its header with `application_id` 0x506C7342 ("PlsB"), so that a restore
/// tells it from any other SQLite file, the live database included. It holds the device certificate key and the
/// hashed tokens: it is written 0600 and must be kept as secret as the data folder.
public struct BackupFile: Sendable {
    /// `PRAGMA application_id` of a backup ("PlsB").
    public static let applicationID: Int32 = 0x506C_7342
    /// The version of this layout; a restore refuses a higher one.
    public static let format = 1
    /// The table that makes a copy a backup (dropped again by a restore).
    static let table = "pulse_backup"

    public let path: String
    /// The schema version of the copied database (`schema_version`).
    public let schemaVersion: Int
    /// When it was made (Unix seconds).
    public let createdAt: Int64
    /// The data folder it was made from.
    public let source: String
    /// Rows in a few tables, for the summaries.
    public let devices: Int
    public let sessions: Int
    public let diagSamples: Int
    /// The file's size in bytes.
    public let bytes: Int
    /// True when it carries a device certificate key (a folder whose server never started has none).
    public let hasCertificateKey: Bool

    /// Opens the file at `path` read-only and checks everything a restore relies on: it is a SQLite file, a
    /// pulse-server backup (`application_id` and the `pulse_backup` row), whole (`PRAGMA integrity_check`), of a
    /// format and schema version this program knows, and its certificate key (if any) is a P-256 key.
    /// - Parameter action: the command, for the error lines (`restore`).
    /// - Throws: `ServerError`: `.notFound` (no file), `.badInput` (not a backup, damaged, too new), `.storage`.
    public static func inspect(_ path: String, action: String = "restore") throws -> BackupFile {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw ServerError(.notFound, "\(action): \(path): no such file")
        }
        guard !isFolder.boolValue else { throw ServerError(.badInput, "\(action): \(path) is a folder, not a pulse-server backup") }
        let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        do {
            let database = try Database(path: path, flags: [.readOnly, .noMutex, .noFollow])
            guard try database.applicationID() == applicationID else {
                throw ServerError(.badInput, "\(action): \(path) is not a pulse-server backup (make one with pulse-server backup --data DIR --to FILE)")
            }
            if let problems = try database.integrityProblems() {
                throw ServerError(.badInput, "\(action): \(path) is damaged (integrity_check: \(problems.prefix(200))); it cannot be restored")
            }
            return try read(database, path: path, bytes: bytes, action: action)
        } catch let error as ServerError {
            throw error
        } catch let error as SQLiteError {
            throw damaged(error, path: path, action: action)
        }
    }

    /// The same file under its new name (after a rename).
    func renamed(_ newPath: String) -> BackupFile {
        BackupFile(
            path: newPath, schemaVersion: schemaVersion, createdAt: createdAt, source: source, devices: devices, sessions: sessions,
            diagSamples: diagSamples, bytes: bytes, hasCertificateKey: hasCertificateKey)
    }

    /// The `pulse_backup` row and the counts, checked.
    private static func read(_ database: Database, path: String, bytes: Int, action: String) throws -> BackupFile {
        let hasTable = try database.scalarInteger("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", [.text(table)]) == 1
        guard hasTable else { throw ServerError(.badInput, "\(action): \(path) is damaged: it has no \(table) table; it cannot be restored") }
        typealias Row = (format: Int, schema: Int, created: Int64, source: String, key: [UInt8]?)
        let row: Row? = try database.prepare("SELECT format, schema_version, created_at, source, certificate_key FROM \(table)").first { row in
            (row.int(0), row.int(1), row.int64(2), row.string(3), row.isNull(4) ? nil : row.blob(4))
        }
        guard var row else { throw ServerError(.badInput, "\(action): \(path) is damaged: its \(table) table is empty; it cannot be restored") }
        var key = row.key ?? []
        let hasKey = row.key != nil
        row.key = nil
        defer { SecretBytes.wipe(&key) }
        guard row.format <= format else {
            throw ServerError(.badInput, "\(action): \(path) is of backup format \(row.format), made by a newer pulse-server (this one reads \(format)); use a newer version")
        }
        let current = SQLiteStorage.schemaVersion
        guard row.schema <= current else {
            throw ServerError(.badInput,
                "\(action): \(path) holds schema version \(row.schema), newer than this pulse-server knows (\(current)); restore it with a newer version")
        }
        let copied = Int(try database.scalarInteger("SELECT max(version) FROM schema_version") ?? 0)
        guard copied == row.schema, row.schema >= 1 else {
            throw ServerError(.badInput, "\(action): \(path) is damaged: its schema is version \(copied), its label says \(row.schema); it cannot be restored")
        }
        if hasKey {
            guard (try? P256.PrivateKey(pemRepresentation: key)) != nil else {
                throw ServerError(.badInput, "\(action): \(path) is damaged: its device certificate key is not a P-256 key; it cannot be restored")
            }
        }
        func count(_ table: String) throws -> Int { Int(try database.scalarInteger("SELECT count(*) FROM \(table)") ?? 0) }
        return BackupFile(
            path: path, schemaVersion: row.schema, createdAt: row.created, source: row.source, devices: try count("devices"),
            sessions: try count("sessions"), diagSamples: try count("diag_samples"), bytes: bytes, hasCertificateKey: hasKey)
    }

    /// The error line for a SQLite error met while reading a supposed backup.
    static func damaged(_ error: SQLiteError, path: String, action: String) -> ServerError {
        switch error.message {
        case let message where message.contains("not a database"):
            ServerError(.badInput, "\(action): \(path) is not a pulse-server backup (not a SQLite file)")
        case let message where message.contains("malformed") || message.contains("corrupt"):
            ServerError(.badInput, "\(action): \(path) is damaged (\(message)); it cannot be restored")
        default:
            ServerError(.storage, "\(action): \(path): cannot read: \(error.message)")
        }
    }

    /// The certificate key of the backup at `database` (already inspected), if any; the caller wipes it.
    static func certificateKey(_ database: Database) throws -> [UInt8]? {
        try database.prepare("SELECT certificate_key FROM \(table)").first { $0.isNull(0) ? nil : $0.blob(0) } ?? nil
    }

    /// Labels the copy at `database` as a backup: the `pulse_backup` row, then the `application_id`.
    static func label(_ database: Database, schemaVersion: Int, createdAt: Int64, source: String, certificateKey: [UInt8]?) throws {
        try database.transaction { database in
            try database.execute("""
                CREATE TABLE \(table) (
                    format INTEGER NOT NULL, schema_version INTEGER NOT NULL, created_at INTEGER NOT NULL, source TEXT NOT NULL,
                    certificate_key BLOB
                )
                """)
            try database.prepare("INSERT INTO \(table) VALUES (?, ?, ?, ?, ?)").run([
                .int(format), .int(schemaVersion), .integer(createdAt), .text(source), certificateKey.map { .blob($0) } ?? .null,
            ])
        }
        try database.setApplicationID(applicationID)
    }
}
