import Foundation

/// A small pool of connections to one database file, so several threads can use it at once without
/// ever sharing a connection: each `withConnection` call has its connection to itself.
///
/// Connections are opened lazily, up to `capacity`; a caller finding none idle waits for one. In WAL
/// mode readers run in parallel and writers queue on SQLite's write lock (the busy timeout).
public final class DatabasePool: @unchecked Sendable {
    private let open: @Sendable () throws -> Database
    private let capacity: Int
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var idle: [Database] = []
    private var opened = 0

    /// - Parameters:
    ///   - capacity: connections at most.
    ///   - open: makes one configured connection (called on the thread that needs it).
    public init(capacity: Int, open: @escaping @Sendable () throws -> Database) {
        precondition(capacity > 0)
        self.capacity = capacity
        self.open = open
    }

    /// Runs `body` with a connection no other thread uses meanwhile.
    public func withConnection<T>(_ body: (Database) throws -> T) throws -> T {
        let database = try checkOut()
        defer { checkIn(database) }
        return try body(database)
    }

    private func checkOut() throws -> Database {
        condition.lock()
        while idle.isEmpty && opened >= capacity { condition.wait() }
        if let database = idle.popLast() {
            condition.unlock()
            return database
        }
        opened += 1
        condition.unlock()
        do {
            return try open()
        } catch {
            condition.lock()
            opened -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func checkIn(_ database: Database) {
        // A body that escaped a transaction some other way must not hand an open one to the next caller.
        database.rollback()
        condition.lock()
        idle.append(database)
        condition.signal()
        condition.unlock()
    }
}
