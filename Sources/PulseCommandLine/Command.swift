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
    /// Checks the arguments together before `run` (swift-argument-parser's `validate()`): throw `UsageError`
    /// for a combination that cannot work. Each option's own value is already checked by its handle.
    public var validate: (@Sendable (Arguments) throws -> Void)?
    /// Runs the command; returns the exit code. Throw `UsageError` for bad arguments (exit 64).
    public var run: (@Sendable (Arguments) throws -> Int32)?

    public init(
        name: String, abstract: String, discussion: String = "", examples: [String] = [], options: [any CommandOption] = [],
        positionals: [any CommandPositional] = [], subcommands: [Command] = [],
        validate: (@Sendable (Arguments) throws -> Void)? = nil,
        run: (@Sendable (Arguments) throws -> Int32)? = nil
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.examples = examples
        self.options = options.map(\.option)
        self.positionals = positionals.map(\.positional)
        self.subcommands = subcommands
        self.validate = validate
        self.run = run
    }
}

/// `--name value`, `--name=value`, or a flag `--name`: the declaration that parsing and help read. Commands
/// make one through a typed handle (`Option.value`, `.int`, `.flag`, …, in OptionHandle.swift).
public struct Option: Sendable {
    public var name: String
    public var short: Character?
    /// The value's placeholder in help (`<dir>`); nil for a flag.
    public var valueName: String?
    public var help: String
    /// May be given more than once (values accumulate).
    public var repeating: Bool
    /// Converts and checks one value while parsing (nil: the text is the value).
    var convert: (@Sendable (String) throws -> any Sendable)?
    /// The usage error when a required option is not given; nil when it may be left out.
    var missing: String?

    init(
        name: String, short: Character?, valueName: String?, help: String, repeating: Bool,
        convert: (@Sendable (String) throws -> any Sendable)? = nil
    ) {
        self.name = name
        self.short = short
        self.valueName = valueName
        self.help = help
        self.repeating = repeating
        self.convert = convert
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
