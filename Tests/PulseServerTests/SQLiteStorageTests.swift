import Foundation
import PulseSQLite
import PulseServer
import PulseTestSupport
import SyncTestSupport
import PulseServerStorage
import Testing

/// What only the SQLite backend has: its file, its schema's own guards.
@Suite struct SQLiteStorageTests {
    static func open() throws -> (TestFolder, SQLiteStorage, Database) {
        let folder = try TestFolder()
        let path = folder.url.appendingPathComponent("s.sqlite").path
        let storage = try SQLiteStorage(path: path)
        return (folder, storage, try Database(path: path))
    }

    @Test func anUnreadableVenueNetworkIsAnErrorNotAnUnlockedSession() throws {
        let (folder, storage, database) = try Self.open()
        defer { withExtendedLifetime(folder) {} }
        try TestContent.seed(storage, "talk")
        try database.cached("INSERT INTO venue_networks (session_id, network) VALUES ('talk', 'garbage')").run()
        let error = #expect(throws: ServerError.self) { try storage.session(id: "talk") }
        #expect(error?.kind == .storage)
    }

    /// Package ids are parsed where they leave the database: one changed by hand is a storage error naming the
    /// row, never a key table or an import refusal built on a string that is no package id.
    @Test func anUnreadablePackageIdInTheDatabaseIsAStorageError() throws {
        let (folder, storage, database) = try Self.open()
        defer { withExtendedLifetime(folder) {} }
        try TestContent.seed(storage, "talk")
        try database.execute("UPDATE key_tables SET package_id = 'not-a-package'")
        let error = #expect(throws: ServerError.self) { try storage.keyTable(sessionId: "talk", deckVersion: 1) }
        #expect(error?.kind == .storage && error?.message == "key table talk/1 has an unreadable package id in the database")
        try database.execute("UPDATE sessions SET package_id = 'not-a-package'")
        let read = #expect(throws: ServerError.self) { try storage.session(id: "talk") }
        #expect(read?.kind == .storage && read?.message == "session talk has an unreadable package id in the database")
        #expect(throws: ServerError.self) { try storage.sessions() }
        let refused = #expect(throws: ServerError.self) {
            try storage.importContent(TestContent.plan([TestContent.session("talk")]), options: ImportOptions(), at: 2000)
        }
        #expect(refused?.kind == .storage && refused?.message == "session talk has an unreadable package id in the database")
    }

    @Test func theSchemaRefusesStatesTheServerMustNeverBeIn() throws {
        let (folder, storage, database) = try Self.open()
        defer { withExtendedLifetime(folder) {} }
        try TestContent.seed(storage, "talk")
        try storage.addCredential(NewCredential(hash: [1], kind: .deviceCode, scope: .session("talk"), createdAt: 1))
        try storage.addCredential(NewCredential(hash: [2], kind: .registrationToken, scope: .series("s"), maxDevices: 2, createdAt: 1))
        for statement in [
            "UPDATE credentials SET devices_enrolled = 2 WHERE hash = x'01'",
            "UPDATE credentials SET devices_enrolled = 3 WHERE hash = x'02'",
            "UPDATE credentials SET scope_kind = NULL, scope_id = NULL WHERE hash = x'01'",
            "UPDATE sessions SET max_shown = -1",
            "UPDATE sessions SET state = 'paused'",
            "INSERT INTO devices (id, public_key, platform, name, scope_kind, scope_id, credential_hash, enrolled_at) VALUES ('d', x'00', 'ios', 'n', 'session', 'talk', x'09', 1)",
        ] {
            let error = #expect(throws: SQLiteError.self, "\(statement)") { try database.execute(statement) }
            #expect(error?.isConstraintViolation == true, "\(statement)")
        }
    }
}
