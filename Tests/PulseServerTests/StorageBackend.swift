import Foundation
import Testing
import PulseServer

/// A storage backend under test: `StorageSuite` runs every check against each one in `all`.
/// The PostgreSQL backend (next issue) adds itself here; its suite is then this same code.
struct StorageBackend: Sendable, CustomTestStringConvertible {
    let name: String
    /// A fresh, empty storage and a way to open a second instance on the same data (another process,
    /// or another server instance on the same database).
    let make: @Sendable () throws -> Instance

    struct Instance: @unchecked Sendable {
        let storage: any ServerStorage
        let peer: () throws -> any ServerStorage
        /// Keeps the backing store (a temp folder, a schema) alive for the test.
        let lease: AnyObject
    }

    var testDescription: String { name }

    static let all: [StorageBackend] = [.sqlite]

    static let sqlite = StorageBackend(name: "SQLite") {
        let folder = try TemporaryFolder()
        let path = folder.url.appendingPathComponent("server.sqlite").path
        let storage = try SQLiteStorage(path: path)
        return Instance(storage: storage, peer: { try SQLiteStorage(path: path) }, lease: folder)
    }
}

/// A temporary folder removed at deinit.
final class TemporaryFolder: @unchecked Sendable {
    let url: URL

    init(_ name: String = #function) throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("pulse-server-\(name.filter { $0.isLetter }.prefix(40))-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}
