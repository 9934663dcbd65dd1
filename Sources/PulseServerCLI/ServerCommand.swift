import Foundation
import PulseAge
import PulseCommandLine
import PulseServer
import PulseCore
import PulseServerStorage

/// `pulse-server`: the command line, declared once (parsing, help, validation, run).
/// `serve` (ServeCommand), `import` (ImportCommand), `admin` (AdminCommand), `migrate` (MigrateCommand),
/// `backup` and `restore` (BackupCommand).
public enum ServerCommand {
    public static func root(console: Console, extra: [Command] = []) -> Command {
        Command(
            name: "pulse-server",
            abstract: "The key-release and sync server of the mobile contract: enrolled devices, device-scoped manifests, gated keys.",
            discussion: """
                All state lives in one data folder (--data DIR): a SQLite database and the device certificate key,
                0700/0600; or, with --database postgresql://… (or PULSE_DATABASE_URL), in PostgreSQL, shared by several
                instances. Exit codes: 0 ok, 64 usage, 65 bad input or a refused change, 1 anything else.
                See docs/server.md.
                """,
            subcommands: extra + [
                ServeCommand.command(console: console), ImportCommand.command(console: console), AdminCommand.command(console: console),
                MigrateCommand.command(console: console), BackupCommand.backup(console: console), BackupCommand.restore(console: console),
            ])
    }

    /// Runs the CLI with `arguments` (without the program name); returns the exit code.
    public static func main(_ arguments: [String], console: Console = .standard(), extra: [Command] = []) -> Int32 {
        CommandLineTool.main(
            root(console: console, extra: extra), arguments: arguments,
            errorHandler: { error in
                console.err("pulse-server: error: \(error)")
                return exitCode(for: error)
            },
            print: console.out, printError: console.err)
    }

    /// The exit code of an error: 65 for bad input and refused changes, 1 for anything else.
    public static func exitCode(for error: any Error) -> Int32 {
        switch error {
        case let error as ServerError: error.exitCode
        case is InputError, is AgeError: ExitCode.dataError
        default: ExitCode.failure
        }
    }

    /// The `--data DIR` option every command takes.
    static let dataOption = Option.value("data", "<dir>", help: "The data folder (created 0700 when missing).")
    /// `--database URL`: PostgreSQL instead of the data folder's SQLite file.
    static let databaseOption = Option.value(
        "database", "<url>",
        help: "postgresql://user:password@host:port/database?sslmode=verify-full: keep the state in PostgreSQL "
            + "(several instances may share it) instead of the SQLite file in --data. Default: $\(databaseVariable).")
    static let jsonOption = Option.flag("json", help: "Print JSON instead of text.")
    /// The environment variable `--database` defaults to (keeps the password out of `ps`).
    public static let databaseVariable = "PULSE_DATABASE_URL"

    /// The data folder named by `--data`, checked.
    static func dataFolder(_ arguments: Arguments) throws -> DataFolder {
        guard let path = arguments[dataOption] else { throw UsageError("missing --data <dir> (or --database <url>, or \(databaseVariable))") }
        return try DataFolder.prepare(path)
    }

    /// The PostgreSQL URL of `--database`, else of `PULSE_DATABASE_URL` (empty counts as unset); nil
    /// when neither gives one.
    /// - Throws: `UsageError` for a value that is not a `postgresql://` URL (never quoting it: it may
    ///   hold a password).
    static func databaseURL(_ arguments: Arguments, _ console: Console) throws -> String? {
        let given = arguments[databaseOption].map { (databaseOption.spelling, $0) }
            ?? console.environment[databaseVariable].flatMap { $0.isEmpty ? nil : (databaseVariable, $0) }
        guard let (source, url) = given else { return nil }
        guard url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") else {
            throw UsageError("\(source) must be a postgresql:// URL (postgresql://user:password@host:port/database)")
        }
        return url
    }

    /// Refuses, before any work, a command given neither `--data` nor a database URL.
    static func checkStorageGiven(_ arguments: Arguments, _ console: Console) throws {
        if try databaseURL(arguments, console) == nil, arguments[dataOption] == nil {
            throw UsageError("missing --data <dir> (or --database <url>, or \(databaseVariable))")
        }
    }

    /// Opens the storage the arguments name: PostgreSQL when `--database` or `PULSE_DATABASE_URL` gives
    /// a URL, else the SQLite file in `--data`. A small pool: one CLI call at a time.
    static func storage(_ arguments: Arguments, _ console: Console, connections: Int = 2) throws -> any ServerStorage {
        if let url = try databaseURL(arguments, console) {
            return try PostgresStorage(url: url, connections: connections, watchChanges: false)
        }
        return try dataFolder(arguments).openStorage(connections: connections)
    }
}
