import CSQLite

/// Owns one `sqlite3*`; closes it when the last owner (the database or a statement) goes away.
///
/// Statements keep their connection alive, so a statement finalized after its `Database` was
/// released never touches a closed handle.
final class Connection {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { sqlite3_close_v2(pointer) }

    /// Throws the connection's error unless `result` is one of `accepted`.
    @discardableResult
    func check(_ result: Int32, _ operation: @autoclosure () -> String, accepting accepted: Int32 = SQLITE_OK) throws(SQLiteError) -> Int32 {
        guard result == accepted else { throw SQLiteError.from(pointer, code: result, operation: operation()) }
        return result
    }
}
