/// A value bound to a statement parameter or read from a result column.
///
/// Parameters travel in the text format except `bytes`, which travel in the binary format (raw bytes,
/// no escaping): the server infers each parameter's type from the statement, so `.integer(5)` fits an
/// `integer` and a `bigint` column alike. Results come back in the binary format (see `PostgresResult`).
public enum PostgresValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case double(Double)
    case text(String)
    /// `bytea`.
    case bytes([UInt8])
    case bool(Bool)

    /// An `Int` as an integer.
    public static func int(_ value: Int) -> PostgresValue { .integer(Int64(value)) }

    /// An optional `Int`: an integer or NULL.
    public static func int(_ value: Int?) -> PostgresValue { value.map { .integer(Int64($0)) } ?? .null }

    /// An optional `Int64`: an integer or NULL.
    public static func integer(_ value: Int64?) -> PostgresValue { value.map { .integer($0) } ?? .null }

    /// An optional `String`: text or NULL.
    public static func text(_ value: String?) -> PostgresValue { value.map { .text($0) } ?? .null }

    /// Optional bytes: bytea or NULL.
    public static func bytes(_ value: [UInt8]?) -> PostgresValue { value.map { .bytes($0) } ?? .null }

    /// The `bytea` type's OID: the one parameter type stated when preparing (the binary format needs it).
    static let byteaOID: UInt32 = 17

    /// The parameter as libpq takes it: bytes (text ones NUL-terminated), and 1 for binary.
    /// - Throws: `.misuse` for text holding a NUL byte, which PostgreSQL text cannot hold.
    func encoded(parameter: Int) throws(PostgresError) -> (bytes: [UInt8], binary: Bool)? {
        switch self {
        case .null: return nil
        case let .integer(number): return (Array(String(number).utf8) + [0], false)
        case let .double(number): return (Array("\(number)".utf8) + [0], false)
        case let .bool(flag): return (Array((flag ? "t" : "f").utf8) + [0], false)
        case let .bytes(bytes): return (bytes, true)
        case let .text(text):
            let bytes = Array(text.utf8)
            guard !bytes.contains(0) else { throw .misuse("parameter $\(parameter) holds a NUL character", operation: "bind") }
            return (bytes + [0], false)
        }
    }
}

extension PostgresValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByNilLiteral, ExpressibleByBooleanLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
