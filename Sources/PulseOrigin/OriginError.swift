/// Why pulse-origin cannot start. Each description is one line for the terminal.
public struct OriginError: Error, CustomStringConvertible, Equatable {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
