/// A command of a command-line tool, declared once: parsing, `--help` text and dispatch all come from it.
/// (The good parts of swift-argument-parser, which cannot be fetched here.)
public struct Command: Sendable {
    public var name: String
    public var abstract: String
    /// Longer help text shown after the usage line.
    public var discussion: String
    /// Command lines shown under EXAMPLES in `--help`, one per line (a `# comment` may follow).
    public var examples: [String]
    public var options: [Option]
    public var positionals: [Positional]
    public var subcommands: [Command]
    /// Runs the command; returns the exit code. Throw `UsageError` for bad arguments (exit 64).
    public var run: (@Sendable (Arguments) throws -> Int32)?

    public init(
        name: String, abstract: String, discussion: String = "", examples: [String] = [], options: [Option] = [],
        positionals: [Positional] = [], subcommands: [Command] = [],
        run: (@Sendable (Arguments) throws -> Int32)? = nil
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.examples = examples
        self.options = options
        self.positionals = positionals
        self.subcommands = subcommands
        self.run = run
    }
}

/// `--name value`, `--name=value`, or a flag `--name`.
public struct Option: Sendable {
    public var name: String
    public var short: Character?
    /// The value's placeholder in help (`<dir>`); nil for a flag.
    public var valueName: String?
    public var help: String
    /// May be given more than once (values accumulate).
    public var repeating: Bool

    public static func flag(_ name: String, short: Character? = nil, help: String) -> Option {
        Option(name: name, short: short, valueName: nil, help: help, repeating: false)
    }

    public static func value(_ name: String, _ valueName: String, short: Character? = nil, help: String, repeating: Bool = false) -> Option {
        Option(name: name, short: short, valueName: valueName, help: help, repeating: repeating)
    }

    var isFlag: Bool { valueName == nil }
}

/// A positional argument.
public struct Positional: Sendable {
    public var name: String
    public var help: String
    public var optional: Bool
    /// Takes all remaining positional arguments.
    public var variadic: Bool

    public init(_ name: String, help: String, optional: Bool = false, variadic: Bool = false) {
        self.name = name
        self.help = help
        self.optional = optional
        self.variadic = variadic
    }
}

/// Bad command-line usage: printed with a hint to `--help`, exit code 64 (EX_USAGE).
public struct UsageError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Exit codes from sysexits(3), as the CLI documents them.
public enum ExitCode {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
    public static let dataError: Int32 = 65
}
