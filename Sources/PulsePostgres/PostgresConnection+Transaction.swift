extension PostgresConnection {
    /// The isolation level a transaction runs at.
    public enum Isolation: String, Sendable {
        /// Each statement sees what was committed before it started; a row another transaction
        /// changed meanwhile is re-read when an UPDATE or `SELECT … FOR UPDATE` reaches it (after
        /// waiting for its lock). With conditional updates and row locks, races are decided here
        /// without serialization failures.
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        /// Fails with `.serializationFailure` instead of letting two transactions see each other's
        /// effects out of order: run the transaction again (`PostgresPool.transaction` does).
        case serializable = "SERIALIZABLE"
    }

    /// Runs `body` in a transaction: COMMIT when it returns, ROLLBACK when it throws.
    ///
    /// Transactions do not nest. A statement that failed inside `body` aborts the transaction even
    /// when `body` caught the error; COMMIT then rolls back, and this throws `.misuse` rather than
    /// report success.
    /// - Throws: what `body` throws (after the rollback), or `PostgresError`.
    public func transaction<T>(_ isolation: Isolation = .readCommitted, _ body: (PostgresConnection) throws -> T) throws -> T {
        guard !isInTransaction else {
            throw PostgresError.misuse("a transaction is already open on this connection", operation: "BEGIN")
        }
        try execute("BEGIN ISOLATION LEVEL \(isolation.rawValue)")
        let result: T
        do {
            result = try body(self)
        } catch {
            rollback()
            throw error
        }
        let tag: String
        do {
            tag = try execute("COMMIT")
        } catch {
            rollback()
            throw error
        }
        guard tag == "COMMIT" else {
            throw PostgresError.misuse("a statement failed inside the transaction, so COMMIT rolled it back", operation: "COMMIT")
        }
        return result
    }

    /// Rolls back an open transaction, if any and if the connection is still there.
    func rollback() {
        if isInTransaction && !connectionLost { _ = try? execute("ROLLBACK") }
    }
}
