import Foundation
import PulsePostgresTesting
import PulseServer
import PulseTestSupport
import SyncTestSupport
import PulseServerStorage
import Testing

/// A storage backend under test: `StorageSuite` runs every check against each one in `all`.
struct StorageBackend: Sendable, CustomTestStringConvertible {
    let name: String
    /// A fresh, empty storage and a way to open a second instance on the same data (another process,
    /// or another server instance on the same database).
    let make: @Sendable () throws -> Instance

    struct Instance: @unchecked Sendable {
        let storage: any ServerStorage
        let peer: () throws -> any ServerStorage
        /// Keeps the backing store (a temp folder, a database) alive for the test.
        let lease: AnyObject
        /// Returns once `storage.generation()` counts every change committed so far by any instance.
        /// SQLite: at once (`generation()` asks the file). PostgreSQL: another instance's change reaches
        /// `generation()` through NOTIFY, a moment after its commit; this waits for it.
        let settle: (any ServerStorage) throws -> Void

        init(storage: any ServerStorage, peer: @escaping () throws -> any ServerStorage, lease: AnyObject,
             settle: @escaping (any ServerStorage) throws -> Void = { _ in }) {
            self.storage = storage
            self.peer = peer
            self.lease = lease
            self.settle = settle
        }

        /// `storage.generation()` after every commit so far has reached it.
        func settledGeneration() throws -> StorageGeneration {
            try settle(storage)
            return try storage.generation()
        }
    }

    var testDescription: String { name }

    static let all: [StorageBackend] = [.sqlite, .postgres]

    static let sqlite = StorageBackend(name: "SQLite") {
        let folder = try TestFolder()
        let path = folder.url.appendingPathComponent("server.sqlite").path
        let storage = try SQLiteStorage(path: path)
        return Instance(storage: storage, peer: { try SQLiteStorage(path: path) }, lease: folder)
    }
}

/// A fresh database on the test cluster (`PostgresCluster.shared()`, started on first use and removed at
/// exit), owned by an ordinary role that connects over TCP with a password, as a server would. Without
/// PostgreSQL installed this fails, saying to run Scripts/bootstrap.
extension StorageBackend {
    static let postgres = StorageBackend(name: "PostgreSQL") {
        let database = try PostgresCluster.shared().createDatabase("storage")
        let storage = try PostgresStorage(configuration: database.configuration)
        return Instance(
            storage: storage, peer: { try PostgresStorage(configuration: database.configuration) }, lease: database,
            settle: { storage in try (storage as! PostgresStorage).synchronize() })
    }
}
