/// What a command reads an option through: declared once (`static let out = Option.value("out", "<dir>",
/// help: …)`), listed in the command's `options`, read as `arguments[Self.out]` with the type it declares.
/// Values are converted and checked while the command line is parsed, so a bad one is a usage error
/// (exit 64, one line naming the option) before any work starts.
public struct OptionHandle<Value: Sendable>: CommandOption {
    public let option: Option
    let read: @Sendable (Arguments) -> Value

    init(_ option: Option, read: @escaping @Sendable (Arguments) -> Value) {
        self.option = option
        self.read = read
    }

    /// The option as it is typed on the command line (`--out`), for messages.
    public var spelling: String { "--\(option.name)" }

    /// The same option, required: when it is not given, parsing fails with `missing` (by default
    /// `missing --name <value>`).
    public func required<Wrapped>(_ missing: String? = nil) -> OptionHandle<Wrapped> where Value == Wrapped? {
        var option = option
        option.missing = missing ?? "missing --\(option.name) \(option.valueName ?? "")"
        let read = read, name = option.name
        return OptionHandle<Wrapped>(option) { arguments in
            guard let value = read(arguments) else {
                preconditionFailure("--\(name) is required but was not parsed")
            }
            return value
        }
    }
}

/// An option a command lists: an `OptionHandle` of any value type.
public protocol CommandOption: Sendable {
    var option: Option { get }
}

extension Option {
    /// A flag, `--name`: true when given.
    public static func flag(_ name: String, short: Character? = nil, help: String) -> OptionHandle<Bool> {
        OptionHandle(Option(name: name, short: short, valueName: nil, help: help, repeating: false)) { $0.flag(name) }
    }

    /// `--name value`: the text, or nil when not given.
    public static func value(_ name: String, _ valueName: String, short: Character? = nil, help: String) -> OptionHandle<String?> {
        OptionHandle(Option(name: name, short: short, valueName: valueName, help: help, repeating: false)) { $0.value(name) }
    }

    /// `--name value`, converted by `parse`; a value it returns nil for is the usage error
    /// `--name must be <mustBe>, got "<value>"`.
    public static func value<T: Sendable>(
        _ name: String, _ valueName: String, short: Character? = nil, help: String, mustBe: String,
        parse: @escaping @Sendable (String) -> T?
    ) -> OptionHandle<T?> {
        value(name, valueName, short: short, help: help) { text in
            guard let value = parse(text) else { throw UsageError("--\(name) must be \(mustBe), got \"\(text)\"") }
            return value
        }
    }

    /// `--name value`, converted by `transform`; what it throws becomes the usage error `--name <error>`
    /// (a `UsageError` is shown as it is).
    public static func value<T: Sendable>(
        _ name: String, _ valueName: String, short: Character? = nil, help: String,
        transform: @escaping @Sendable (String) throws -> T
    ) -> OptionHandle<T?> {
        let option = Option(name: name, short: short, valueName: valueName, help: help, repeating: false, convert: converter(name, transform))
        return OptionHandle(option) { $0.converted[name]?.last as? T }
    }

    /// A whole number within `range`, or nil when not given.
    public static func int(_ name: String, _ valueName: String, short: Character? = nil, in range: ClosedRange<Int>, help: String) -> OptionHandle<Int?> {
        value(name, valueName, short: short, help: help, mustBe: "a whole number from \(range.lowerBound) to \(range.upperBound)") { text in
            Int(text).flatMap { range.contains($0) ? $0 : nil }
        }
    }

    /// `--name value`, repeatable: every value in order.
    public static func values(_ name: String, _ valueName: String, short: Character? = nil, help: String) -> OptionHandle<[String]> {
        OptionHandle(Option(name: name, short: short, valueName: valueName, help: help, repeating: true)) { $0.values(name) }
    }

    /// `--name value`, repeatable, each converted by `transform` (errors as in `value(_:_:help:transform:)`).
    public static func values<T: Sendable>(
        _ name: String, _ valueName: String, short: Character? = nil, help: String,
        transform: @escaping @Sendable (String) throws -> T
    ) -> OptionHandle<[T]> {
        let option = Option(name: name, short: short, valueName: valueName, help: help, repeating: true, convert: converter(name, transform))
        return OptionHandle(option) { ($0.converted[name] ?? []).compactMap { $0 as? T } }
    }

    private static func converter<T: Sendable>(
        _ name: String, _ transform: @escaping @Sendable (String) throws -> T
    ) -> @Sendable (String) throws -> any Sendable {
        { text in
            do { return try transform(text) } catch let error as UsageError { throw error } catch { throw UsageError("--\(name) \(error)") }
        }
    }
}

/// What a command reads a positional argument through (`static let input = Positional.one("input", help: …)`).
public struct PositionalHandle<Value: Sendable>: CommandPositional {
    public let positional: Positional
    let read: @Sendable (Arguments) -> Value
}

/// A positional argument a command lists: a `PositionalHandle`, or a bare `Positional`.
public protocol CommandPositional: Sendable {
    var positional: Positional { get }
}

extension Positional: CommandPositional {
    public var positional: Positional { self }

    /// A required argument (parsing fails with `missing <name>` without it).
    public static func one(_ name: String, help: String) -> PositionalHandle<String> {
        PositionalHandle(positional: Positional(name, help: help)) { arguments in
            guard let value = arguments.positional(name) else { preconditionFailure("<\(name)> is required but was not parsed") }
            return value
        }
    }

    /// An argument that may be left out.
    public static func optional(_ name: String, help: String) -> PositionalHandle<String?> {
        PositionalHandle(positional: Positional(name, help: help, optional: true)) { $0.positional(name) }
    }

    /// All remaining arguments (at least one unless `optional`).
    public static func variadic(_ name: String, help: String, optional: Bool = false) -> PositionalHandle<[String]> {
        PositionalHandle(positional: Positional(name, help: help, optional: optional, variadic: true)) { $0.positionalValues(name) }
    }
}
