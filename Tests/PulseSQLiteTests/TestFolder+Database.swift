import Foundation
import PulseSQLite
import PulseTestSupport

/// A database file in the one temporary folder of the tests (PulseTestSupport's `TestFolder`), removed with it.
extension TestFolder {
    var databasePath: String { path("test.sqlite") }

    func openDatabase(_ options: Database.Options = Database.Options()) throws -> Database {
        try Database(path: databasePath, options: options)
    }
}
