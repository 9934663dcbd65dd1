/// The parsed arguments of one command invocation.
public struct Arguments: Sendable {
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String: [String]] = [:]

    /// A flag's presence.
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// An option's last value, if given.
    public func value(_ name: String) -> String? { values[name]?.last }

    /// All values of a repeating option.
    public func values(_ name: String) -> [String] { values[name] ?? [] }

    /// A positional argument's value, if given.
    public func positional(_ name: String) -> String? { positionals[name]?.first }

    /// All values of a variadic positional.
    public func positionalValues(_ name: String) -> [String] { positionals[name] ?? [] }

    /// A required value (option or positional).
    public func required(_ name: String) throws -> String {
        guard let value = value(name) ?? positional(name) else { throw UsageError("missing \(name)") }
        return value
    }

    /// An integer option within `range`.
    public func int(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(text)\"")
        }
        return number
    }
}
