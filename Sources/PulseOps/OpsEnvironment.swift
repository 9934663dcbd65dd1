import Foundation
import PulseSystem

/// What the push and gc commands take from the process: environment variables, home folder, output
/// streams, the clock. Tests pass their own; `OpsEnvironment.process` is the real one.
public struct OpsEnvironment: Sendable {
    public var variables: [String: String]
    public var home: String?
    /// Writes one line to standard output.
    public var standardOutput: @Sendable (String) -> Void
    /// Writes text to standard error as is (no newline added): progress bars use `\r`.
    public var standardError: @Sendable (String) -> Void
    /// Standard error is a terminal: show a progress bar.
    public var errorIsTerminal: Bool
    public var now: @Sendable () -> Date

    public init(
        variables: [String: String], home: String?, standardOutput: @escaping @Sendable (String) -> Void,
        standardError: @escaping @Sendable (String) -> Void, errorIsTerminal: Bool = false,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.variables = variables
        self.home = home
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.errorIsTerminal = errorIsTerminal
        self.now = now
    }

    public static var process: OpsEnvironment {
        let variables = ProcessInfo.processInfo.environment
        return OpsEnvironment(
            variables: variables,
            home: variables["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path,
            standardOutput: { print($0) },
            standardError: { FileHandle.standardError.write(Data($0.utf8)) },
            errorIsTerminal: File.standardError.isTerminal && variables["TERM"] != "dumb")
    }
}
