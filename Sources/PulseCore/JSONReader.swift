import Foundation

/// Reads one JSON object of an input file field by field, checking types as it goes.
///
/// Each accessor names the file and the JSON path in its error (`speakers[1].name: expected a string`).
/// Call `finish()` when done: a key that nothing asked for is an error with the closest known field
/// (`speakers[0].foto: unknown field; did you mean "photo"?`), or a warning when `Warnings.lenient`.
public struct JSONReader {
    public let file: String
    public let path: String
    private let fields: [String: JSONValue]
    private let seen: KeySet
    private let warnings: Warnings

    /// Starts reading the top-level object of a document.
    public init(file: String, value: JSONValue, warnings: Warnings) throws {
        guard case let .object(fields) = value else {
            throw InputError(file: file, "expected a JSON object at the top level")
        }
        self.init(file: file, path: "", fields: fields, warnings: warnings)
    }

    private init(file: String, path: String, fields: [String: JSONValue], warnings: Warnings) {
        self.file = file
        self.path = path
        self.fields = fields
        self.seen = KeySet()
        self.warnings = warnings
    }

    /// Reports the keys no accessor read: the first as an error, or each as a warning when lenient.
    /// The suggestion is the closest field this reader was asked for.
    public func finish() throws {
        for key in fields.keys.sorted() where !seen.keys.contains(key) {
            let hint = Suggestion.didYouMean(key, among: seen.keys.sorted())
            if !warnings.lenient { throw error(key, "unknown field" + hint + " (--lenient ignores unknown fields)") }
            warnings.add("\(file): \(childPath(key)): unknown field, ignored" + hint)
        }
    }

    public func error(_ key: String, _ message: String) -> InputError {
        InputError(file: file, path: childPath(key), message)
    }

    /// A required field is absent: when a field of a close name is there instead (`backgroud`), that
    /// typo is the error, with its suggestion; else `missing (expected a string)`.
    public func missing(_ key: String, _ expected: String) -> InputError {
        let unread = fields.keys.filter { !seen.keys.contains($0) }
        if let typo = unread.sorted().first(where: { Suggestion.closest(to: $0, among: [key]) != nil }) {
            return error(typo, "unknown field; did you mean \"\(key)\"? (\(key) is missing)")
        }
        return error(key, "missing (expected \(expected))")
    }

    public func has(_ key: String) -> Bool { fields[key] != nil && fields[key] != .null }

    // MARK: - Scalars

    public func string(_ key: String) throws -> String {
        guard let value = try optionalString(key) else { throw missing(key, "a string") }
        return value
    }

    public func optionalString(_ key: String) throws -> String? {
        guard let value = take(key) else { return nil }
        guard case let .string(text) = value else { throw error(key, "expected a string, found \(value.kindName)") }
        return text
    }

    /// A string that must have the shape `format`; `what` describes it.
    public func string(_ key: String, matching format: TextFormat, what: String) throws -> String {
        let value = try string(key)
        try check(value, key: key, matching: format, what: what)
        return value
    }

    public func optionalString(_ key: String, matching format: TextFormat, what: String) throws -> String? {
        guard let value = try optionalString(key) else { return nil }
        try check(value, key: key, matching: format, what: what)
        return value
    }

    /// A string from a fixed set of values.
    public func string(_ key: String, oneOf choices: [String]) throws -> String {
        let value = try string(key)
        guard choices.contains(value) else {
            throw error(key, "must be one of \(choices.map { "\"\($0)\"" }.joined(separator: ", ")), found \"\(value)\"")
        }
        return value
    }

    public func int(_ key: String, in range: ClosedRange<Int> = 0...Int.max) throws -> Int {
        guard let value = try optionalInt(key, in: range) else { throw missing(key, "an integer") }
        return value
    }

    public func optionalInt(_ key: String, in range: ClosedRange<Int> = 0...Int.max) throws -> Int? {
        guard let value = take(key) else { return nil }
        guard case let .int(number) = value else { throw error(key, "expected an integer, found \(value.kindName)") }
        guard range.contains(number) else {
            throw error(key, "must be between \(range.lowerBound) and \(range.upperBound), found \(number)")
        }
        return number
    }

    // MARK: - Containers

    public func object(_ key: String) throws -> JSONReader {
        guard let value = try optionalObject(key) else { throw missing(key, "an object") }
        return value
    }

    public func optionalObject(_ key: String) throws -> JSONReader? {
        guard let value = take(key) else { return nil }
        guard case let .object(fields) = value else { throw error(key, "expected an object, found \(value.kindName)") }
        return JSONReader(file: file, path: childPath(key), fields: fields, warnings: warnings)
    }

    /// An array of objects, each read by `body`, which must read every field it wants kept.
    public func objects<T>(_ key: String, required: Bool = true, _ body: (JSONReader) throws -> T) throws -> [T] {
        guard let items = try array(key, required: required) else { return [] }
        return try items.enumerated().map { index, item in
            let itemPath = "\(childPath(key))[\(index)]"
            guard case let .object(fields) = item else {
                throw InputError(file: file, path: itemPath, "expected an object, found \(item.kindName)")
            }
            let reader = JSONReader(file: file, path: itemPath, fields: fields, warnings: warnings)
            let result = try body(reader)
            try reader.finish()
            return result
        }
    }

    public func strings(_ key: String, required: Bool = true) throws -> [String] {
        guard let items = try array(key, required: required) else { return [] }
        return try items.enumerated().map { index, item in
            guard case let .string(text) = item else {
                throw InputError(file: file, path: "\(childPath(key))[\(index)]", "expected a string, found \(item.kindName)")
            }
            return text
        }
    }

    private func array(_ key: String, required: Bool) throws -> [JSONValue]? {
        guard let value = take(key) else {
            if required { throw missing(key, "an array") }
            return nil
        }
        guard case let .array(items) = value else { throw error(key, "expected an array, found \(value.kindName)") }
        return items
    }

    // MARK: - Helpers

    private func take(_ key: String) -> JSONValue? {
        seen.keys.insert(key)
        guard let value = fields[key], value != .null else { return nil }
        return value
    }

    private func childPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private func check(_ value: String, key: String, matching format: TextFormat, what: String) throws {
        guard format.matches(value) else {
            throw error(key, "expected \(what), found \"\(value)\"")
        }
    }
}

/// The keys a reader has asked for (shared by copies of one reader).
private final class KeySet {
    var keys: Set<String> = []
}

/// Warnings collected while reading input: printed by the CLI, counted in the summary.
public final class Warnings {
    public private(set) var messages: [String] = []
    /// `--lenient`: unknown fields are warnings instead of errors.
    public let lenient: Bool
    public init(lenient: Bool = false) { self.lenient = lenient }
    public func add(_ message: String) { messages.append(message) }
}

extension JSONValue {
    /// "a string", "an object", … for error messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int: "an integer"
        case .double: "a number with a fraction"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
