import Foundation
import PulseCommandLine

/// What push and gc share: one-line errors with the right exit code, JSON output, byte counts.
enum OpsCommand {
    /// Runs `body`; a failure becomes one line on standard error and its exit code
    /// (65 bad input, 64 usage, 1 anything else). Usage errors go to the tool for its `--help` hint.
    static func run(_ environment: OpsEnvironment, _ body: () throws -> Void) throws -> Int32 {
        do {
            try body()
            return ExitCode.success
        } catch let error as UsageError {
            throw error
        } catch {
            let error = OpsError.from(error)
            if error.kind == .usage { throw UsageError(error.description) }
            environment.standardError("pulse-pack: error: \(error.description)\n")
            return error.exitCode
        }
    }

    static func json(_ object: [String: Any]) -> String {
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    static func byteText(_ bytes: Int) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        if bytes < 1024 * 1024 { return String(format: "%.1f KiB", Double(bytes) / 1024) }
        return String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }
}
