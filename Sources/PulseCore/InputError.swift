/// A problem with something the user gave us: a file, a field in it, an argument.
/// Its description is the one line the CLI prints: `<file>: <path>: <message>`.
public struct InputError: Error, CustomStringConvertible, Equatable {
    /// The file (or argument) at fault.
    public var file: String
    /// Where inside it, for example a JSON path `speakers[1].name`; empty when the whole file is at fault.
    public var path: String
    public var message: String

    public init(file: String, path: String = "", _ message: String) {
        self.file = file
        self.path = path
        self.message = message
    }

    public var description: String {
        path.isEmpty ? "\(file): \(message)" : "\(file): \(path): \(message)"
    }
}
