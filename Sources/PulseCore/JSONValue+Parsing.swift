import Foundation

extension JSONValue {
    /// Arrays and objects nest at most this deep in a document the tools read.
    public static let maxNesting = 512

    /// Parses a JSON document strictly (RFC 8259; see `JSONParser`).
    /// - Throws: `JSONValue.SyntaxError` with the line, column and what is wrong.
    public static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> JSONValue {
        try JSONParser.parse(bytes)
    }

    /// Parses a JSON document strictly from `Data` or any other bytes.
    public static func parse(_ data: some Sequence<UInt8>) throws(SyntaxError) -> JSONValue {
        try JSONParser.parse(Array(data))
    }

    /// Parses the bytes of `file`; an error is an `InputError` whose location is `file:line:column`.
    public static func parse(_ data: some Sequence<UInt8>, file: String) throws(InputError) -> JSONValue {
        do { return try JSONParser.parse(Array(data)) } catch { throw error.inputError(file: file) }
    }

    /// Why bytes are not a JSON document, and where.
    public struct SyntaxError: Error, CustomStringConvertible, Equatable {
        /// 1-based line.
        public let line: Int
        /// 1-based column, in characters (Unicode scalars) of the line.
        public let column: Int
        /// The byte offset of the problem.
        public let offset: Int
        public let message: String

        init(bytes: [UInt8], offset: Int, message: String) {
            (line, column) = Self.lineAndColumn(bytes, offset)
            self.offset = offset
            self.message = message
        }

        /// `3:14: missing ',' between fields`.
        public var description: String { "\(line):\(column): \(message)" }

        /// The one error line the CLI prints: `file:line:column: what`.
        public func inputError(file: String) -> InputError {
            InputError(file: "\(file):\(line):\(column)", message)
        }

        static func lineAndColumn(_ bytes: [UInt8], _ offset: Int) -> (Int, Int) {
            var line = 1, column = 1
            for byte in bytes[0..<min(offset, bytes.count)] {
                if byte == 0x0a {
                    line += 1
                    column = 1
                } else if byte & 0xc0 != 0x80 {
                    column += 1
                }
            }
            return (line, column)
        }
    }
}
