/// A value bound to a statement parameter or read from a column.
public enum SQLiteValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// An `Int` as an INTEGER.
    public static func int(_ value: Int) -> SQLiteValue { .integer(Int64(value)) }

    /// An optional `Int`: INTEGER or NULL.
    public static func int(_ value: Int?) -> SQLiteValue { value.map { .integer(Int64($0)) } ?? .null }

    /// An optional `String`: TEXT or NULL.
    public static func text(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }

    /// A `Bool` as 0 or 1.
    public static func bool(_ value: Bool) -> SQLiteValue { .integer(value ? 1 : 0) }
}

extension SQLiteValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByNilLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(nilLiteral: ()) { self = .null }
}
