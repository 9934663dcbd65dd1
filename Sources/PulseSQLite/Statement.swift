import CSQLite

/// A prepared statement: prepare once, then bind → step → reset for every use.
///
/// `run`, `rows` and `first` do the whole cycle and always reset, so a statement never holds a read
/// snapshot open between uses (which would keep the WAL from being checkpointed and hide other
/// connections' commits from `dataVersion`).
public final class Statement {
    private let pointer: OpaquePointer
    private let connection: Connection
    /// The SQL text, for errors.
    public let sql: String

    init(connection: Connection, sql: String) throws(SQLiteError) {
        var handle: OpaquePointer?
        let result = sqlite3_prepare_v3(connection.pointer, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard result == SQLITE_OK, let handle else {
            throw SQLiteError.from(connection.pointer, code: result, operation: "prepare \(Database.summary(sql))")
        }
        self.pointer = handle
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(pointer) }

    // MARK: - Binding

    /// Clears every parameter, then binds `values` to parameters 1…n.
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        sqlite3_clear_bindings(pointer)
        let expected = Int(sqlite3_bind_parameter_count(pointer))
        guard values.count == expected else {
            throw SQLiteError.misuse("\(values.count) values for \(expected) parameters", operation: "bind \(Database.summary(sql))")
        }
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds one value to parameter `index` (from 1).
    public func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        let result: Int32
        switch value {
        case .null:
            result = sqlite3_bind_null(pointer, index)
        case let .integer(number):
            result = sqlite3_bind_int64(pointer, index, number)
        case let .real(number):
            result = sqlite3_bind_double(pointer, index, number)
        case let .text(text):
            var text = text
            result = text.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    // An empty buffer may have no base address, which SQLite would bind as NULL.
                    guard let base = chars.baseAddress, !chars.isEmpty else {
                        return sqlite3_bind_text(pointer, index, "", 0, Self.transient)
                    }
                    return sqlite3_bind_text(pointer, index, base, Int32(chars.count), Self.transient)
                }
            }
        case let .blob(bytes):
            if bytes.isEmpty {
                result = sqlite3_bind_zeroblob(pointer, index, 0)
            } else {
                result = bytes.withUnsafeBytes { raw in
                    sqlite3_bind_blob(pointer, index, raw.baseAddress, Int32(raw.count), Self.transient)
                }
            }
        }
        try connection.check(result, "bind parameter \(index) of \(Database.summary(sql))")
    }

    /// `SQLITE_TRANSIENT` (a C macro Swift cannot import): SQLite copies the bytes before the call returns.
    private static let transient = unsafeBitCast(-1 as Int, to: sqlite3_destructor_type.self)

    // MARK: - Stepping

    /// Advances to the next row: true when a row is available, false when the statement is done.
    public func step() throws(SQLiteError) -> Bool {
        let result = sqlite3_step(pointer)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = SQLiteError.from(connection.pointer, code: result, operation: "step \(Database.summary(sql))")
            sqlite3_reset(pointer)
            throw error
        }
    }

    /// Rewinds the statement so it can run again; bindings stay.
    public func reset() { sqlite3_reset(pointer) }

    /// Binds `values`, steps to the end, resets. For INSERT, UPDATE, DELETE without RETURNING.
    public func run(_ values: [SQLiteValue] = []) throws(SQLiteError) {
        defer { reset() }
        try bind(values)
        while try step() {}
    }

    /// Binds `values` and maps every row with `row`, then resets.
    public func rows<T>(_ values: [SQLiteValue] = [], _ row: (Statement) -> T) throws(SQLiteError) -> [T] {
        defer { reset() }
        try bind(values)
        var result: [T] = []
        while try step() { result.append(row(self)) }
        return result
    }

    /// Binds `values` and maps the first row (nil for none), then resets.
    public func first<T>(_ values: [SQLiteValue] = [], _ row: (Statement) -> T) throws(SQLiteError) -> T? {
        defer { reset() }
        try bind(values)
        guard try step() else { return nil }
        return row(self)
    }

    // MARK: - Columns of the current row (index from 0)

    public var columnCount: Int { Int(sqlite3_column_count(pointer)) }

    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(pointer, column) == SQLITE_NULL }

    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(pointer, column) }

    public func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(pointer, column)) }

    public func optionalInt(_ column: Int32) -> Int? { isNull(column) ? nil : int(column) }

    public func double(_ column: Int32) -> Double { sqlite3_column_double(pointer, column) }

    public func bool(_ column: Int32) -> Bool { sqlite3_column_int64(pointer, column) != 0 }

    /// A TEXT column (NULL reads as the empty string).
    public func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(pointer, column) else { return "" }
        let count = Int(sqlite3_column_bytes(pointer, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    public func optionalString(_ column: Int32) -> String? { isNull(column) ? nil : string(column) }

    /// A BLOB column (NULL reads as empty).
    public func blob(_ column: Int32) -> [UInt8] {
        // Order matters: sqlite3_column_blob first, then sqlite3_column_bytes (SQLite's documented rule).
        let base = sqlite3_column_blob(pointer, column)
        let count = Int(sqlite3_column_bytes(pointer, column))
        guard let base, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Any column as a value.
    public func value(_ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(pointer, column) {
        case SQLITE_INTEGER: .integer(int64(column))
        case SQLITE_FLOAT: .real(double(column))
        case SQLITE_TEXT: .text(string(column))
        case SQLITE_BLOB: .blob(blob(column))
        default: .null
        }
    }
}
