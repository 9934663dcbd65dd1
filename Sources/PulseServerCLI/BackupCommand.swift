import Foundation
import PulseCommandLine
import PulseCore
import PulseServer
import PulseServerBackup
import PulseServerStorage

/// `pulse-server backup --data DIR --to FILE [--json]` and `pulse-server restore --from FILE --data DIR [--replace] [--json]`
enum BackupCommand {
    static let data = Option.value("data", "<dir>", help: "The data folder.").required("missing --data <dir>")
    static let to = Option.value("to", "<file>", help: "The backup file to write (replaced whole, only once the new one is checked).")
        .required("missing --to <file>")
    static let from = Option.value("from", "<file>", help: "A file made by pulse-server backup.").required("missing --from <file>")
    /// Declared only to refuse it with the right advice.
    static let database = Option.value(
        "database", "<url>", help: "Refused: the state of a server on PostgreSQL is backed up with pg_dump -Fc and pg_restore (docs/operations.md).")
    static let replace = Option.flag("replace", help: "Overwrite a data folder that holds a database or certificate key (what it holds is lost).")

    static func backup(console: Console) -> Command {
        Command(
            name: "backup",
            abstract: "Take a consistent copy of a data folder, also while servers serve from it.",
            discussion: """
                SQLite's online backup API copies the database from one snapshot: the backup holds every transaction committed
                before it began, and servers go on serving meanwhile. The device certificate key is put in it too, so a server
                restored from it serves the same devices. The file is written under a temp name beside FILE, checked
                (integrity, label, schema version), fsynced, then renamed over FILE: a failed backup leaves the previous FILE
                whole. FILE is 0600 and holds the certificate key and hashed tokens: keep it as secret as the data folder.
                With PostgreSQL (--database), back up with pg_dump instead (docs/operations.md).
                """,
            examples: [
                "pulse-server backup --data /var/lib/pulse --to /var/backups/pulse/pulse-$(date +%F-%H%M).backup",
                "pulse-server backup --data /var/lib/pulse --to /var/backups/pulse/latest.backup --json",
            ],
            options: [data, to, database, ServerCommand.jsonOption],
            validate: { arguments in try refusePostgres(arguments, "backup") },
            run: { arguments in try runBackup(arguments, console: console) })
    }

    static func restore(console: Console) -> Command {
        Command(
            name: "restore",
            abstract: "Put a backup back into a data folder no server is using.",
            discussion: """
                The backup is checked whole first (a pulse-server backup, not damaged, of a schema this version knows);
                then DIR (created 0700 when missing) is locked: a running server holds it, and the restore refuses. A
                folder that holds a database or certificate key is refused unless --replace. The database and the key are
                staged under temp names in DIR, then renamed into place, and the old database's -wal and -shm removed
                first. With --replace, a crash in the last step leaves DIR half replaced: run the same restore again.
                Start serve on DIR afterwards; it upgrades an older schema as usual.
                """,
            examples: [
                "pulse-server restore --from /var/backups/pulse/latest.backup --data /var/lib/pulse",
                "systemctl stop pulse-server && pulse-server restore --from latest.backup --data /var/lib/pulse --replace",
            ],
            options: [from, data, replace, database, ServerCommand.jsonOption],
            validate: { arguments in try refusePostgres(arguments, "restore") },
            run: { arguments in try runRestore(arguments, console: console) })
    }

    /// The state of a PostgreSQL server is backed up by PostgreSQL's own tools.
    private static func refusePostgres(_ arguments: Arguments, _ command: String) throws {
        if arguments[database] != nil {
            throw UsageError("--database: \(command) works on a SQLite data folder (--data); with PostgreSQL use pg_dump -Fc and pg_restore (docs/operations.md)")
        }
    }

    static func runBackup(_ arguments: Arguments, console: Console) throws -> Int32 {
        let target = URL(fileURLWithPath: arguments[to]).standardizedFileURL.path
        let backup = try DataFolderBackup.create(from: arguments[data], to: target, now: TimeText.now())
        if arguments[ServerCommand.jsonOption] {
            console.out(json: json(backup))
        } else {
            console.out("backed up \(backup.source) to \(target): \(summary(backup)); it holds the "
                + (backup.hasCertificateKey ? "device certificate key and " : "") + "hashed tokens: keep it private")
        }
        return ExitCode.success
    }

    static func runRestore(_ arguments: Arguments, console: Console) throws -> Int32 {
        let file = URL(fileURLWithPath: arguments[from]).standardizedFileURL.path
        let restored = try DataFolderRestore.run(from: file, into: arguments[data], replace: arguments[replace])
        if arguments[ServerCommand.jsonOption] {
            var object = json(restored.backup)
            if case var .object(fields) = object {
                fields["data"] = .string(restored.folder)
                fields["replaced"] = .bool(restored.replaced)
                object = .object(fields)
            }
            console.out(json: object)
        } else {
            console.out("restored \(file) (made \(TimeText.iso(restored.backup.createdAt)) from \(restored.backup.source)) into "
                + "\(restored.folder)\(restored.replaced ? ", replacing what it held" : ""): \(summary(restored.backup))")
        }
        return ExitCode.success
    }

    private static func summary(_ backup: BackupFile) -> String {
        "\(backup.bytes) bytes, schema version \(backup.schemaVersion), \(backup.devices) devices, \(backup.sessions) sessions, "
            + "\(backup.diagSamples) diagnostic samples"
    }

    private static func json(_ backup: BackupFile) -> JSONValue {
        .object([
            "file": .string(backup.path), "bytes": .int(backup.bytes), "schemaVersion": .int(backup.schemaVersion),
            "createdAt": .string(TimeText.iso(backup.createdAt)), "source": .string(backup.source), "devices": .int(backup.devices),
            "sessions": .int(backup.sessions), "diagSamples": .int(backup.diagSamples), "certificateKey": .bool(backup.hasCertificateKey),
        ])
    }
}
