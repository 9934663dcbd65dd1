import Foundation
import PulsePostgres
import PulsePostgresTesting
import Testing

@Suite struct PoolTests {
    @Test func neverHandsOneConnectionToTwoThreadsAndNeverOpensMoreThanItsCapacity() throws {
        let database = try PostgresCluster.shared().createDatabase()
        let pool = PostgresPool(configuration: database.configuration, capacity: 3)
        let users = Claims()
        let failures = Tally()
        DispatchQueue.concurrentPerform(iterations: 40) { n in
            do {
                try pool.withConnection { db in
                    users.claim(db)
                    defer { users.release(db) }
                    _ = try db.query("SELECT $1::int", [.int(n)])
                }
            } catch { failures.add() }
        }
        #expect(failures.value == 0 && users.conflicts == 0 && users.highest <= 3)
        #expect(pool.openConnections <= 3)
    }

    @Test func aConnectionWhoseServerProcessEndedIsReplacedBeforeItIsHandedOut() throws {
        let database = try PostgresCluster.shared().createDatabase()
        let pool = PostgresPool(configuration: database.configuration, capacity: 1)
        let first = try pool.withConnection { $0.backendPID }
        _ = try pool.withConnection { try $0.query("SELECT $1::int", [1]) }  // prepared on the first server process
        try Self.terminate(first, in: database)
        // The same pooled connection: noticed dead at checkout (no round trip), reconnected, statements prepared again.
        let (second, value) = try pool.withConnection { db in (db.backendPID, try db.query("SELECT $1::int", [7]).first!.int(0)) }
        #expect(second != first && value == 7)
    }

    @Test func aReadOnAPooledConnectionThatBreaksInUseRunsOnceMoreOnANewOneAndAWriteDoesNot() throws {
        let database = try PostgresCluster.shared().createDatabase()
        let pool = PostgresPool(configuration: database.configuration, capacity: 1)
        _ = try pool.withConnection { try $0.query("SELECT 1") }  // opened before: not fresh below
        var runs = 0
        let value = try pool.withConnection(retryingBrokenConnection: true) { db -> Int in
            runs += 1
            if runs == 1 { try Self.terminate(db.backendPID, in: database) }
            return try db.query("SELECT 5").first!.int(0)
        }
        #expect(value == 5 && runs == 2)
        runs = 0
        let error = #expect(throws: PostgresError.self) {
            try pool.withConnection { db in
                runs += 1
                try Self.terminate(db.backendPID, in: database)
                _ = try db.query("SELECT 5")
            }
        }
        #expect(error?.kind == .unavailable && runs == 1)
    }

    @Test func aStatementOnAConnectionThatBrokeIsUnavailableAndResetRestoresIt() throws {
        let database = try PostgresCluster.shared().createDatabase()
        let db = try PostgresConnection(database.configuration)
        _ = try db.query("SELECT 1")
        try Self.terminate(db.backendPID, in: database)
        let error = #expect(throws: PostgresError.self) { try db.query("SELECT 1") }
        #expect(error?.kind == .unavailable)
        #expect(!db.isUsable())
        try db.reset()
        #expect(try db.query("SELECT 1").first?.int(0) == 1)
    }

    /// Ends a server process as an administrator would and waits until it is gone.
    static func terminate(_ pid: Int32, in database: TestDatabase) throws {
        let admin = try PostgresConnection(try database.cluster.superuser())
        _ = try admin.query("SELECT pg_terminate_backend($1)", [.int(Int(pid))])
        try waitUntil("server process \(pid) ends") {
            try admin.query("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", [.int(Int(pid))]).first!.int(0) == 0
        }
    }
}

@Suite struct ListenerTests {
    @Test func aNotificationArrivesOnlyAfterCommitAndAfterAReconnect() throws {
        let database = try PostgresCluster.shared().createDatabase()
        let events = Events()
        let listener = try PostgresListener(configuration: database.configuration, channels: ["changes"]) { events.add($0) }
        defer { listener.stop() }
        let sender = try PostgresConnection(database.configuration)
        try sender.transaction { db in
            _ = try db.query("SELECT pg_notify('changes', $1)", ["in a transaction"])
            _ = try db.query("SELECT pg_notify('elsewhere', $1)", ["not listened to"])
            #expect(events.payloads.isEmpty)  // nothing is sent before COMMIT
        }
        try events.wait(for: "in a transaction")
        #expect(events.notifications.first?.backendPID == sender.backendPID)

        // The listener's server process ends: it reconnects on its own and listens again.
        let pid = try events.listenerPID(database)
        try PoolTests.terminate(pid, in: database)
        try waitUntil("the listener reconnects") { events.reconnects >= 1 && listener.isConnected }
        #expect(events.disconnects >= 1)
        _ = try sender.query("SELECT pg_notify('changes', $1)", ["after the reconnect"])
        try events.wait(for: "after the reconnect")
    }

    @Test func restartingTheServerIsSurvivedByThePoolAndTheListener() throws {
        let cluster = try PostgresCluster()  // its own: stopping the shared one would fail other tests
        defer { cluster.destroy() }
        let database = try cluster.createDatabase()
        let pool = PostgresPool(configuration: database.configuration, capacity: 2)
        let events = Events()
        let listener = try PostgresListener(configuration: database.configuration, channels: ["changes"]) { events.add($0) }
        defer { listener.stop() }
        _ = try pool.withConnection { try $0.query("SELECT 1") }

        try cluster.stop()
        let down = #expect(throws: PostgresError.self) { try pool.withConnection { try $0.query("SELECT 1") } }
        #expect(down?.kind == .unavailable)
        try waitUntil("the listener notices") { events.disconnects >= 1 && !listener.isConnected }

        try cluster.start()
        #expect(try pool.withConnection { try $0.query("SELECT 2").first!.int(0) } == 2)
        try waitUntil("the listener reconnects") { listener.isConnected }
        _ = try pool.withConnection { try $0.query("SELECT pg_notify('changes', 'back')") }
        try events.wait(for: "back")
    }
}

@Suite struct MigrationTests {
    static let one = PostgresMigration(version: 1, sql: "CREATE TABLE a (id integer PRIMARY KEY)")
    static let two = PostgresMigration(version: 2, sql: "CREATE TABLE b (id integer PRIMARY KEY); ALTER TABLE a ADD COLUMN note text")

    @Test func concurrentFirstStartsMigrateOnce() throws {
        let database = try PostgresCluster.shared().createDatabase()
        let starts = Results()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do {
                let db = try PostgresConnection(database.configuration)
                starts.add(.success(try db.migrate([Self.one, Self.two], lockKey: 42).from))
            } catch { starts.add(.failure(error)) }
        }
        #expect(starts.failures.isEmpty, "\(starts.failures)")
        #expect(starts.values.sorted() == [0, 2, 2, 2, 2, 2, 2, 2])
        let db = try PostgresConnection(database.configuration)
        #expect(try db.query("SELECT version FROM schema_version ORDER BY version").rows.map { try $0.int(0) } == [1, 2])
    }

    @Test func anOlderSchemaIsMigratedAndANewerOneRefused() throws {
        let database = try PostgresCluster.shared().createDatabase()
        let db = try PostgresConnection(database.configuration)
        #expect(try db.schemaVersion() == 0)
        #expect(try db.migrate([Self.one], lockKey: 42) == (0, 1))
        #expect(try db.migrate([Self.one, Self.two], lockKey: 42) == (1, 2))
        #expect(try db.migrate([Self.one, Self.two], lockKey: 42) == (2, 2))
        let error = #expect(throws: PostgresError.self) { try db.migrate([Self.one], lockKey: 42) }
        #expect(error?.message.hasPrefix("the database has schema version 2, newer than this program knows (1)") == true)
    }

    @Test func aFailingMigrationLeavesTheSchemaAsItWas() throws {
        let database = try PostgresCluster.shared().createDatabase()
        let db = try PostgresConnection(database.configuration)
        try db.migrate([Self.one], lockKey: 42)
        let broken = PostgresMigration(version: 2, sql: "CREATE TABLE b (id integer); CREATE TABLE a (id integer)")
        #expect(throws: PostgresError.self) { try db.migrate([Self.one, broken], lockKey: 42) }
        #expect(try db.schemaVersion() == 1)
        #expect(try db.query("SELECT to_regclass('b') IS NULL").first?.bool(0) == true)
    }
}

// MARK: - Helpers

/// Waits for `condition` (checked every 10 ms) up to `seconds`; throws when it never held.
func waitUntil(_ what: String, seconds: Double = 10, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while try !condition() {
        guard Date() < deadline else { throw Timeout(what: what) }
        Thread.sleep(forTimeInterval: 0.01)
    }
}

struct Timeout: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting until \(what)" }
}

final class Events: @unchecked Sendable {
    private let lock = NSCondition()
    private var received: [PostgresListener.Event] = []

    func add(_ event: PostgresListener.Event) { lock.withLock { received.append(event); lock.broadcast() } }

    var notifications: [PostgresListener.Notification] {
        lock.withLock { received.compactMap { if case let .notification(n) = $0 { return n } else { return nil } } }
    }
    var payloads: [String] { notifications.map(\.payload) }
    var disconnects: Int { lock.withLock { received.filter { if case .disconnected = $0 { true } else { false } }.count } }
    var reconnects: Int { lock.withLock { received.filter { if case .connected = $0 { true } else { false } }.count } }

    /// Waits until a notification with `payload` arrived (up to 10 s).
    func wait(for payload: String) throws {
        let deadline = Date().addingTimeInterval(10)
        lock.lock()
        defer { lock.unlock() }
        while !received.contains(where: { if case let .notification(n) = $0 { n.payload == payload } else { false } }) {
            guard lock.wait(until: deadline) else { throw Timeout(what: "notification \(payload) arrives") }
        }
    }

    /// The server process of the (only) listening connection of `database`.
    func listenerPID(_ database: TestDatabase) throws -> Int32 {
        let admin = try PostgresConnection(try database.cluster.superuser())
        let row = try admin.query("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'", [.text(database.name)]).first
        return Int32(try #require(row).int(0))
    }
}

final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<Int, any Error>] = []
    func add(_ result: Result<Int, any Error>) { lock.withLock { results.append(result) } }
    var values: [Int] { lock.withLock { results.compactMap { try? $0.get() } } }
    var failures: [String] { lock.withLock { results.compactMap { if case let .failure(e) = $0 { "\(e)" } else { nil } } } }
}

final class Claims: @unchecked Sendable {
    private let lock = NSLock()
    private var inUse: Set<ObjectIdentifier> = []
    private(set) var conflicts = 0
    private(set) var highest = 0
    func claim(_ object: AnyObject) {
        lock.withLock {
            if !inUse.insert(ObjectIdentifier(object)).inserted { conflicts += 1 }
            highest = max(highest, inUse.count)
        }
    }
    func release(_ object: AnyObject) { lock.withLock { _ = inUse.remove(ObjectIdentifier(object)) } }
}
