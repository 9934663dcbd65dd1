import Foundation
import PulseSystem
import Synchronization

/// A bounded pool of connections to one database, so several threads can use it at once without ever
/// sharing a connection: each `withConnection` call has its connection to itself.
///
/// Connections are opened lazily, up to `capacity`; a caller finding none idle waits for one. A
/// connection that broke (the server restarted, the network failed) is never handed out again: at
/// checkout an idle connection is checked without a round trip (`isUsable`) and reconnected
/// (`PQreset`) when it died while idle; one that failed while in use is closed at checkin.
public final class PostgresPool: Sendable {
    private struct State {
        var idle: [PostgresConnection] = []
        var opened = 0
    }

    public let configuration: PostgresConfiguration
    /// Round trips of every connection of this pool.
    public let roundTrips = RoundTripCounter()
    /// Connections found dead at checkout (then reset with `PQreset`, or dropped if that fails) so far, and
    /// connections that failed while in use and were dropped (the next caller opens a new one): how often the
    /// database went away (metrics).
    public var reconnects: Int { reconnected.load(ordering: .relaxed) }
    private let reconnected = Atomic<Int>(0)
    private let capacity: Int
    private let state = Condition(State())

    /// - Parameter capacity: connections at most.
    public init(configuration: PostgresConfiguration, capacity: Int) {
        precondition(capacity > 0)
        self.configuration = configuration
        self.capacity = capacity
    }

    /// Runs `body` with a connection no other thread uses meanwhile.
    /// - Parameter retryingBrokenConnection: when `body` finds the connection broken (`.unavailable`)
    ///   and it was one opened earlier, run `body` once more on a new connection: for reads, which
    ///   decide nothing and may run twice. Never for writes: a connection can break after the server
    ///   committed. A connection that cannot be made at all is not tried twice (with a server that
    ///   does not answer, each try waits for `connect_timeout`).
    /// - Throws: `PostgresError(.unavailable)` when no connection can be made, or what `body` throws.
    public func withConnection<T>(retryingBrokenConnection: Bool = false, _ body: (PostgresConnection) throws -> T) throws -> T {
        let (connection, fresh) = try checkOut()
        do {
            defer { checkIn(connection) }
            return try body(connection)
        } catch let error as PostgresError where error.kind == .unavailable && retryingBrokenConnection && !fresh {
            return try withConnection(body)
        }
    }

    /// Runs `body` in a transaction on a pooled connection, running it again (up to `attempts`
    /// times in all) when the server reports a serialization failure or a deadlock: such a
    /// transaction did nothing, so running it again is safe.
    public func transaction<T>(
        _ isolation: PostgresConnection.Isolation = .readCommitted, attempts: Int = 5, _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        var attempt = 1
        while true {
            do {
                return try withConnection { try $0.transaction(isolation, body) }
            } catch let error as PostgresError where error.isRetryable && attempt < attempts {
                attempt += 1
            }
        }
    }

    /// Connections open now (idle or in use).
    public var openConnections: Int { state.withLock { $0.opened } }

    /// A connection, and whether it was (re)connected just now.
    private func checkOut() throws -> (PostgresConnection, fresh: Bool) {
        let idle = state.wait(until: { !$0.idle.isEmpty || $0.opened < capacity }) { state -> PostgresConnection? in
            if let connection = state.idle.popLast() { return connection }
            state.opened += 1
            return nil
        }
        if let connection = idle {
            if connection.isUsable() { return (connection, false) }
            // Counted when found dead, whether or not the reset works now: the database away for a while is
            // one dead connection per idle one, not a count that moves only if the reset happens to succeed.
            reconnected.add(1, ordering: .relaxed)
            do {
                try connection.reset()
                return (connection, true)
            } catch {
                release()
                throw error
            }
        }
        do {
            return (try PostgresConnection(configuration, counter: roundTrips), true)
        } catch {
            release()
            throw error
        }
    }

    private func checkIn(_ connection: PostgresConnection) {
        // A body that escaped a transaction some other way must not hand an open one to the next caller.
        connection.rollback()
        guard !connection.connectionLost && !connection.isInTransaction else {
            if connection.connectionLost { reconnected.add(1, ordering: .relaxed) }
            release()  // closed when the last reference goes
            return
        }
        state.withLock(waking: .one) { $0.idle.append(connection) }
    }

    /// Frees the place of a connection that was closed or never opened.
    private func release() {
        state.withLock(waking: .one) { $0.opened -= 1 }
    }
}
