import Foundation
import PulseCommandLine
import PulseSystem

/// What the push and gc commands take from the process: environment variables, home folder, where they
/// print (`Console`), the clock. Tests pass their own; `OpsEnvironment.process` is the real one.
public struct OpsEnvironment: Sendable {
    public var variables: [String: String]
    public var home: String?
    public var console: Console
    public var now: @Sendable () -> Date

    public init(variables: [String: String], home: String?, console: Console, now: @escaping @Sendable () -> Date = { Date() }) {
        self.variables = variables
        self.home = home
        self.console = console
        self.now = now
    }

    /// - Parameters:
    ///   - standardOutput: writes one line to standard output.
    ///   - standardError: writes text to standard error as is (no newline added): progress bars use `\r`.
    ///   - errorIsTerminal: standard error is a terminal: show a progress bar.
    public init(
        variables: [String: String], home: String?, standardOutput: @escaping @Sendable (String) -> Void,
        standardError: @escaping @Sendable (String) -> Void, errorIsTerminal: Bool = false,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        let console = Console(
            out: standardOutput, err: { standardError($0 + "\n") }, progress: errorIsTerminal ? standardError : nil, environment: variables)
        self.init(variables: variables, home: home, console: console, now: now)
    }

    public static var process: OpsEnvironment {
        let variables = ProcessInfo.processInfo.environment
        return OpsEnvironment(
            variables: variables, home: variables["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path,
            console: .standard(environment: variables))
    }
}
