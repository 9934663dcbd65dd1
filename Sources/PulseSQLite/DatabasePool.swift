import Foundation
import PulseSystem

/// A small pool of connections to one database file, so several threads can use it at once without
/// ever sharing a connection: each `withConnection` call has its connection to itself.
///
/// Connections are opened lazily, up to `capacity`; a caller finding none idle waits for one. In WAL
/// mode readers run in parallel and writers queue on SQLite's write lock (the busy timeout).
public final class DatabasePool: Sendable {
    private struct State {
        var idle: [Database] = []
        var opened = 0
    }

    private let open: @Sendable () throws -> Database
    private let capacity: Int
    private let state = Condition(State())

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
        let idle = state.wait(until: { !$0.idle.isEmpty || $0.opened < capacity }) { state -> Database? in
            if let database = state.idle.popLast() { return database }
            state.opened += 1
            return nil
        }
        if let idle { return idle }
        do {
            return try open()
        } catch {
            state.withLock(waking: .one) { $0.opened -= 1 }
            throw error
        }
    }

    private func checkIn(_ database: Database) {
        // A body that escaped a transaction some other way must not hand an open one to the next caller.
        database.rollback()
        state.withLock(waking: .one) { $0.idle.append(database) }
    }
}
