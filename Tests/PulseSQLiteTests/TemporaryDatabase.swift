import Foundation
import PulseSQLite

/// A database file in a fresh temporary folder, removed with the folder at deinit.
final class TemporaryDatabase {
    let folder: URL
    var path: String { folder.appendingPathComponent("test.sqlite").path }

    init(_ name: String = #function) throws {
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("pulse-sqlite-\(name.filter { $0.isLetter })-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    func open(_ options: Database.Options = Database.Options()) throws -> Database {
        try Database(path: path, options: options)
    }
}
