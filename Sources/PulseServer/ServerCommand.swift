import Foundation
import PulseAge
import PulseCommandLine
import PulseCore

/// `pulse-server`: the command line, declared once (parsing, help, validation, run).
/// `serve` (ServeCommand), `import` (ImportCommand) and `admin` (AdminCommand).
public enum ServerCommand {
    public static func root(console: Console, extra: [Command] = []) -> Command {
        Command(
            name: "pulse-server",
            abstract: "The key-release and sync server of the mobile contract: enrolled devices, device-scoped manifests, gated keys.",
            discussion: """
                All state lives in one data folder (--data DIR): a SQLite database and the device certificate key,
                0700/0600. Exit codes: 0 ok, 64 usage, 65 bad input or a refused change, 1 anything else.
                See docs/server.md.
                """,
            subcommands: extra + [
                ServeCommand.command(console: console), ImportCommand.command(console: console), AdminCommand.command(console: console),
            ])
    }

    /// Runs the CLI with `arguments` (without the program name); returns the exit code.
    public static func main(_ arguments: [String], console: Console = .standard, extra: [Command] = []) -> Int32 {
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
    static let jsonOption = Option.flag("json", help: "Print JSON instead of text.")

    /// The data folder named by `--data`, checked.
    static func dataFolder(_ arguments: Arguments) throws -> DataFolder {
        guard let path = arguments.value("data") else { throw UsageError("missing --data <dir>") }
        return try DataFolder.prepare(path)
    }

    /// Opens the storage of `--data` (a small pool: one CLI call at a time).
    static func storage(_ arguments: Arguments) throws -> SQLiteStorage {
        try dataFolder(arguments).openStorage(connections: 2)
    }
}
