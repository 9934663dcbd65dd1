import Foundation
import PulseAge
import PulseCommandLine
import PulseCore
import PulsePDF
import PulsePack
import PulseStore
import PulseSystem

/// The `pulse-pack` command line: its command tree and how errors become exit codes.
///
/// Exit codes: 0 ok, 64 usage, 65 bad input (a file or field the user gave is wrong), 1 anything else
/// (I/O, a full disk, problems found by `verify`).
public enum PulsePackCLI {
    /// The command tree; `extra` adds subcommands (tests). push and gc are listed, and run by `pulse-pack-ops`.
    /// `environment` is where build and verify find the secret's home, `PULSE_PACKAGE_SECRET` and
    /// `SOURCE_DATE_EPOCH` (tests pass their own).
    public static func root(
        console: Console, environment: [String: String] = ProcessInfo.processInfo.environment, extra: [Command] = []
    ) -> Command {
        Command(
            name: "pulse-pack",
            abstract: "Package an event's slide decks for offline pre-caching: encrypted, content-addressed, verifiable.",
            examples: [
                "pulse-pack build Samples/series.json --out pkg",
                "pulse-pack verify pkg",
                "pulse-pack diff pkg keynote",
                "pulse-pack push pkg --to s3://bucket/event --endpoint https://s3.example.net --region eu-central-1",
            ],
            subcommands: [
                BuildCommand.command(console: console, environment: environment),
                VerifyCommand.command(console: console, environment: environment),
                DiffCommand.command(console: console),
                KeysCommand.make(console: console),
            ] + OpsCommands.listing + extra)
    }

    /// Runs `pulse-pack` with `arguments` (without the program name); returns the exit code.
    public static func main(
        _ arguments: [String], console: Console = .standard(),
        environment: [String: String] = ProcessInfo.processInfo.environment, extra: [Command] = []
    ) -> Int32 {
        CommandLineTool.main(
            root(console: console, environment: environment, extra: extra), arguments: arguments,
            errorHandler: { error in
                console.err("pulse-pack: error: \(describe(error))")
                return exitCode(for: error)
            },
            print: console.out, printError: console.err)
    }

    /// The error's one line. A Foundation file error that escaped unwrapped says which file and the
    /// system's reason, never "The operation could not be completed."
    static func describe(_ error: any Error) -> String {
        let nsError = error as NSError
        guard nsError.domain == NSCocoaErrorDomain || nsError.domain == NSPOSIXErrorDomain else { return "\(error)" }
        let path = (nsError.userInfo[NSFilePathErrorKey] as? String) ?? (nsError.userInfo[NSURLErrorKey] as? URL)?.path
        return (path.map { "\($0): " } ?? "") + Errno.describe(error)
    }

    static func exitCode(for error: any Error) -> Int32 {
        switch error {
        case is InputError, is PDFError, is AgeError: ExitCode.dataError
        default: ExitCode.failure
        }
    }

    /// Prints collected warnings to stderr.
    static func printWarnings(_ warnings: [String], console: Console) {
        for warning in warnings { console.err("pulse-pack: warning: \(warning)") }
    }
}

/// Converts a path argument to a file URL.
func fileURL(_ path: String) -> URL { URL(fileURLWithPath: path).standardizedFileURL }
