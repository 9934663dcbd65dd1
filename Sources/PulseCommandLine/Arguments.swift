/// The parsed arguments of one command invocation, read through the handles the command declared
/// (`arguments[Self.out]`), so an option's name is written once.
public struct Arguments: Sendable {
    var values: [String: [String]] = [:]
    /// Each option value as its handle converted it while parsing.
    var converted: [String: [any Sendable]] = [:]
    var flags: Set<String> = []
    var positionals: [String: [String]] = [:]
    /// The names the command declares: reading any other handle is a mistake in the command, not in its input.
    var declared: Set<String> = []

    /// The value of an option the command declares.
    public subscript<Value>(_ handle: OptionHandle<Value>) -> Value {
        precondition(declared.contains("--" + handle.option.name), "--\(handle.option.name) is not an option of this command")
        return handle.read(self)
    }

    /// The value of a positional argument the command declares.
    public subscript<Value>(_ handle: PositionalHandle<Value>) -> Value {
        precondition(declared.contains("<\(handle.positional.name)>"), "<\(handle.positional.name)> is not an argument of this command")
        return handle.read(self)
    }

    // The lookups by name stay inside this module: the handles use them.

    func flag(_ name: String) -> Bool { flags.contains(name) }

    func value(_ name: String) -> String? { values[name]?.last }

    func values(_ name: String) -> [String] { values[name] ?? [] }

    func positional(_ name: String) -> String? { positionals[name]?.first }

    func positionalValues(_ name: String) -> [String] { positionals[name] ?? [] }
}
