import CPostgres

/// The rows a statement returned, decoded from the binary format into `PostgresValue`s as soon as
/// they arrive (the `PGresult` is freed before the caller sees them), and how many rows it changed.
///
/// Binary results: a `bytea` column is its raw bytes (no hex to decode, half the bytes of the text
/// form for key tables and manifests), integers are exact. Decoded types: boolean, smallint, integer,
/// bigint, oid, real, double precision, text, varchar, char, name, json, jsonb, bytea and void. Any
/// other type is a `.misuse` error naming the column: cast it in SQL (`count(*)` is a bigint already;
/// `sum()` of bigints is numeric, so `sum(x)::bigint`).
public struct PostgresResult: Sendable {
    public let columns: [String]
    public let rows: [PostgresRow]
    /// The count of the command tag: rows inserted, updated, deleted, or returned by a SELECT (0 for
    /// statements without one).
    public let affectedRows: Int
    /// The command tag: `INSERT 0 1`, `UPDATE 3`, `COMMIT`, `ROLLBACK`, …
    public let command: String

    /// The first row, if any.
    public var first: PostgresRow? { rows.first }
}

/// One row of a result. Accessors throw `.misuse` when the column holds another type (or NULL where
/// a value is required), naming the column.
public struct PostgresRow: Sendable {
    public let values: [PostgresValue]
    let columns: [String]

    public subscript(column: Int) -> PostgresValue { values[column] }

    public func isNull(_ column: Int) -> Bool { values[column] == .null }

    public func int64(_ column: Int) throws(PostgresError) -> Int64 {
        guard case let .integer(number) = values[column] else { throw mismatch(column, "an integer") }
        return number
    }

    public func int(_ column: Int) throws(PostgresError) -> Int { Int(try int64(column)) }

    public func optionalInt(_ column: Int) throws(PostgresError) -> Int? { isNull(column) ? nil : try int(column) }

    public func optionalInt64(_ column: Int) throws(PostgresError) -> Int64? { isNull(column) ? nil : try int64(column) }

    public func string(_ column: Int) throws(PostgresError) -> String {
        guard case let .text(text) = values[column] else { throw mismatch(column, "text") }
        return text
    }

    public func optionalString(_ column: Int) throws(PostgresError) -> String? { isNull(column) ? nil : try string(column) }

    public func bytes(_ column: Int) throws(PostgresError) -> [UInt8] {
        guard case let .bytes(bytes) = values[column] else { throw mismatch(column, "bytea") }
        return bytes
    }

    public func bool(_ column: Int) throws(PostgresError) -> Bool {
        guard case let .bool(flag) = values[column] else { throw mismatch(column, "a boolean") }
        return flag
    }

    public func double(_ column: Int) throws(PostgresError) -> Double {
        switch values[column] {
        case let .double(number): return number
        case let .integer(number): return Double(number)
        default: throw mismatch(column, "a number")
        }
    }

    private func mismatch(_ column: Int, _ wanted: String) -> PostgresError {
        let name = column < columns.count ? columns[column] : "#\(column)"
        return .misuse("column \(name) is \(values[column].typeName), not \(wanted)", operation: "read a row")
    }
}

extension PostgresValue {
    var typeName: String {
        switch self {
        case .null: "NULL"
        case .integer: "an integer"
        case .double: "a floating-point number"
        case .text: "text"
        case .bytes: "bytea"
        case .bool: "a boolean"
        }
    }
}

/// Owns one `PGresult`; freed in deinit.
final class ResultHandle {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { PQclear(pointer) }

    var status: ExecStatusType { PQresultStatus(pointer) }

    func field(_ code: Int32) -> String? { PQresultErrorField(pointer, code).map { String(cString: $0) } }

    /// Every row, decoded; the result must be in the binary format. `operation` (for errors) is made only
    /// when one is thrown: summarizing a statement's text on every call cost more than the decoding.
    func decode(operation: @autoclosure () -> String) throws(PostgresError) -> PostgresResult {
        let columnCount = Int(PQnfields(pointer))
        let rowCount = Int(PQntuples(pointer))
        let columns = (0..<columnCount).map { String(cString: PQfname(pointer, Int32($0))) }
        let types = (0..<columnCount).map { PQftype(pointer, Int32($0)) }
        var rows: [PostgresRow] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<Int32(rowCount) {
            var values: [PostgresValue] = []
            values.reserveCapacity(columnCount)
            for column in 0..<Int32(columnCount) {
                if PQgetisnull(pointer, row, column) != 0 {
                    values.append(.null)
                    continue
                }
                let length = Int(PQgetlength(pointer, row, column))
                let bytes = UnsafeRawBufferPointer(start: PQgetvalue(pointer, row, column), count: length)
                values.append(try Self.value(bytes, type: types[Int(column)], column: columns[Int(column)], operation: operation()))
            }
            rows.append(PostgresRow(values: values, columns: columns))
        }
        let command = PQcmdStatus(pointer).map { String(cString: $0) } ?? ""
        let affected = PQcmdTuples(pointer).flatMap { Int(String(cString: $0)) } ?? 0
        return PostgresResult(columns: columns, rows: rows, affectedRows: affected, command: command)
    }

    /// One binary-format value of type `oid`.
    private static func value(_ bytes: UnsafeRawBufferPointer, type oid: Oid, column: String, operation: @autoclosure () -> String) throws(PostgresError) -> PostgresValue {
        func integer(_ width: Int) throws(PostgresError) -> Int64 {
            guard bytes.count == width else { throw .misuse("column \(column): \(bytes.count) bytes for a \(width)-byte integer", operation: operation()) }
            var value: UInt64 = 0
            for byte in bytes { value = value << 8 | UInt64(byte) }
            // Sign-extend from `width` bytes.
            let shift = UInt64(64 - 8 * width)
            return Int64(bitPattern: value << shift) >> Int64(shift)
        }
        switch oid {
        case 16: return .bool(bytes.first == 1)
        case 17: return .bytes(Array(bytes))
        case 20: return .integer(try integer(8))
        case 21: return .integer(try integer(2))
        case 23: return .integer(try integer(4))
        case 26: return .integer(try integer(4) & 0xffff_ffff)  // oid is unsigned
        case 700: return .double(Double(Float(bitPattern: UInt32(truncatingIfNeeded: try integer(4)))))
        case 701: return .double(Double(bitPattern: UInt64(bitPattern: try integer(8))))
        case 19, 25, 114, 705, 1042, 1043: return .text(String(decoding: bytes, as: UTF8.self))
        case 3802: return .text(String(decoding: bytes.dropFirst(), as: UTF8.self))  // jsonb: a version byte, then text
        case 2278: return .null  // void: what pg_notify() and pg_advisory_xact_lock() return
        default:
            throw .misuse("column \(column) has type oid \(oid), which PulsePostgres does not decode; cast it in SQL", operation: operation())
        }
    }
}
