// Transitional: the string lookups the tools not yet moved to typed handles still use. Removed once every
// tool reads its options through handles (issue 22 item 5).
extension Arguments {
    public func legacyFlag(_ name: String) -> Bool { flag(name) }
    public func legacyValue(_ name: String) -> String? { value(name) }
    public func legacyValues(_ name: String) -> [String] { values(name) }
    public func legacyPositional(_ name: String) -> String? { positional(name) }
    public func legacyPositionalValues(_ name: String) -> [String] { positionalValues(name) }
    public func legacyRequired(_ name: String) throws -> String {
        guard let value = value(name) ?? positional(name) else { throw UsageError("missing \(name)") }
        return value
    }
    public func legacyInt(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(text)\"")
        }
        return number
    }
}

extension CommandOption where Self == OptionHandle<String?> {
    public static func value(_ name: String, _ valueName: String, short: Character? = nil, help: String, repeating: Bool = false) -> Self {
        var handle = Option.value(name, valueName, short: short, help: help)
        handle.option.repeating = repeating
        return handle
    }
}

extension CommandOption where Self == OptionHandle<Bool> {
    public static func flag(_ name: String, short: Character? = nil, help: String) -> Self { Option.flag(name, short: short, help: help) }
}
