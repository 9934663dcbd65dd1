import Foundation
import PulseCommandLine
import PulseCore
import PulseOps

/// What push and gc share: one-line errors with the right exit code, JSON output, byte counts.
enum OpsCommand {
    /// Runs `body`; a failure becomes one line on standard error and its exit code
    /// (65 bad input, 64 usage, 75 target busy, 1 anything else). Usage errors go to the tool for its `--help` hint.
    static func run(_ environment: OpsEnvironment, _ body: () throws -> Void) throws -> Int32 {
        do {
            try body()
            return ExitCode.success
        } catch let error as UsageError {
            throw error
        } catch {
            let error = OpsError.from(error)
            if error.kind == .usage { throw UsageError(error.description) }
            environment.console.err("pulse-pack: error: \(error.description)")
            return error.exitCode
        }
    }

    /// A `--json` answer printed as build, verify and diff print theirs: indented, keys sorted, one object.
    static func json(_ object: JSONValue) -> String {
        String(decoding: object.prettyBytes.dropLast(), as: UTF8.self)
    }

    /// Bytes as pulse-pack's summaries show them: SI units (1 KB = 1000 B), one decimal (`1.2 MB`);
    /// `--json` gives the exact count.
    static func byteText(_ bytes: Int) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// Seconds with millisecond precision, for `--json`.
    static func seconds(_ value: Double) -> JSONValue { .double((value * 1000).rounded() / 1000) }
}

extension OpsError {
    /// The process exit code for this error (sysexits: 65 bad input, 64 usage, 75 busy, 1 otherwise).
    public var exitCode: Int32 {
        switch kind {
        case .badInput: ExitCode.dataError
        case .failure: ExitCode.failure
        case .usage: ExitCode.usage
        case .busy: 75
        }
    }
}
