extension Database {
    /// How a transaction takes its locks.
    public enum TransactionKind: String, Sendable {
        /// Takes the write lock at BEGIN: for every transaction that writes. A transaction that reads,
        /// then writes, would otherwise fail with SQLITE_BUSY when another writer got in between.
        case immediate = "IMMEDIATE"
        /// Takes locks as statements need them: for read-only snapshots.
        case deferred = "DEFERRED"
    }

    /// Runs `body` in a transaction: COMMIT when it returns, ROLLBACK when it throws.
    ///
    /// Transactions do not nest; a `transaction` inside another throws (use one per unit of work).
    /// - Throws: what `body` throws (after the rollback), or `SQLiteError`.
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: (Database) throws -> T) throws -> T {
        guard !isInTransaction else {
            throw SQLiteError.misuse("a transaction is already open on this connection", operation: "BEGIN \(kind.rawValue)")
        }
        try execute("BEGIN \(kind.rawValue)")
        let result: T
        do {
            result = try body(self)
        } catch {
            rollback()
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            rollback()
            throw error
        }
        return result
    }

    /// Rolls back an open transaction, if any (a failed COMMIT may already have ended it).
    func rollback() {
        if isInTransaction { try? execute("ROLLBACK") }
    }
}
