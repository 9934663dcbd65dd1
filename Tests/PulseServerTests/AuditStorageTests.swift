import Foundation
import PulseCore
import PulsePostgres
import PulsePostgresTesting
import PulseSQLite
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseServerStorage

/// The audit log on every backend: an action's row is written with it (and only when it is done), a refusal
/// gets its own row, ids grow, reads page by id and time, and the table refuses UPDATE and DELETE.
@Suite struct AuditStorageTests {
    static let staff = AuditActor.staff(tokenId: "0123456789ab")

    /// An administration acting as a staff token from 192.0.2.7, its clock at `at`.
    static func administration(_ storage: any ServerStorage, at: Int64 = 5000) -> Administration {
        Administration(storage: storage, clock: { at }).acting(as: staff, from: "192.0.2.7")
    }

    static func rows(_ storage: any ServerStorage) throws -> [AuditEntry] {
        try storage.auditEntries(after: 0, since: nil, limit: 1000).map(\.entry)
    }

    @Test(arguments: StorageBackend.all)
    func doneActionsAreRecordedWithThemAndRefusalsApart(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        let storage = instance.storage
        try TestContent.seed(storage, "talk")
        let admin = Self.administration(storage)
        #expect(try Self.rows(storage).isEmpty)

        let minted = try admin.createDeviceCode(scope: .session("talk"), lifetime: 60)
        #expect(try Self.rows(storage) == [AuditEntry(
            at: 5000, actor: Self.staff, action: .deviceCodeCreate, target: minted.listingId, detail: "for session talk, expires 1970-01-01T01:24:20Z",
            client: "192.0.2.7", result: .ok)])
        #expect(throws: ServerError.self) { try admin.createDeviceCode(scope: .session("nope")) }
        #expect(try Self.rows(storage).last == AuditEntry(
            at: 5000, actor: Self.staff, action: .deviceCodeCreate, detail: "for session nope", client: "192.0.2.7", result: .refused("not-found")))

        // A refused advance (draft): nothing done, one refusal row; then a done one.
        #expect(throws: ServerError.self) { try admin.advance(sessionId: "talk", to: 2) }
        #expect(try Self.rows(storage).last?.result == .refused("conflict"))
        _ = try admin.setSession(id: "talk", SessionUpdate(state: .live, allowDownload: true))
        _ = try admin.advance(sessionId: "talk", to: 2)
        let last = try Self.rows(storage).suffix(3)
        #expect(last.map(\.action) == [.sessionState, .sessionDownloadRule, .sessionAdvance])
        #expect(last.map(\.detail) == ["live", "allowDownload true", "to 2"])
        #expect(last.allSatisfy { $0.result == .ok && $0.target == "talk" })

        // Revoking: by text (never recorded) and by id; again is refused.
        _ = try admin.revokeToken(minted.text)
        #expect(throws: ServerError.self) { try admin.revokeToken(minted.listingId) }
        let revokes = try Self.rows(storage).suffix(2)
        #expect(revokes.map(\.action) == [.tokenRevoke, .tokenRevoke])
        #expect(revokes.map(\.result) == [.ok, .refused("not-found")])
        #expect(revokes.allSatisfy { $0.target == minted.listingId })
        let staffToken = try admin.createStaffToken()
        _ = try admin.revokeToken(staffToken.text)
        #expect(try Self.rows(storage).suffix(2).map(\.action) == [.staffTokenCreate, .staffTokenRevoke])
        #expect(throws: ServerError.self) { try admin.revokeToken("not a token") }
        #expect(try Self.rows(storage).last == AuditEntry(
            at: 5000, actor: Self.staff, action: .tokenRevoke, client: "192.0.2.7", result: .refused("bad-input")))
        #expect(throws: ServerError.self) { try admin.revokeDevice(id: "nope") }
        #expect(try Self.rows(storage).last?.action == .deviceRevoke && Self.rows(storage).last?.target == "nope")

        // An import refused (an older deck) writes nothing but its refusal.
        _ = try admin.importContent(TestContent.plan([TestContent.session("talk", deckVersion: 2)]), options: ImportOptions())
        #expect(throws: ServerError.self) { try admin.importContent(TestContent.plan([TestContent.session("talk", deckVersion: 1)]), options: ImportOptions()) }
        let imports = try Self.rows(storage).suffix(2)
        #expect(imports.map(\.action) == [.import, .import] && imports.map(\.result) == [.ok, .refused("conflict")])
        #expect(imports.first?.target == TestContent.packageA && imports.first?.detail == "sessions talk")
        #expect(try storage.session(id: "talk")?.deckVersion == 2)

        // No row holds a secret.
        let everything = try Self.rows(storage).map { "\($0)" }.joined()
        #expect(!everything.contains(minted.text) && !everything.contains(staffToken.text))
        // An audit append moves no cache.
        let before = try instance.settledGeneration()
        try storage.appendAudit([AuditEntry(at: 6000, actor: .cli(user: "ops"), action: .import, result: .error)])
        #expect(try instance.settledGeneration() == before)
    }

    @Test(arguments: StorageBackend.all)
    func readsPageByIdAndTime(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        let storage = instance.storage
        for n in 0..<7 {
            try storage.appendAudit([AuditEntry(at: 1000 + Int64(n) * 10, actor: .cli(user: "ops"), action: .sessionAdvance, target: "s\(n)")])
        }
        let all = try storage.auditEntries(after: 0, since: nil, limit: 100)
        #expect(all.map(\.entry.target) == (0..<7).map { "s\($0)" })
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.id < $1.id })
        try #require(all.count == 7)
        let page = try storage.auditEntries(after: all[1].id, since: nil, limit: 2)
        #expect(page.map(\.entry.target) == ["s2", "s3"])
        #expect(try storage.auditEntries(after: 0, since: 1040, limit: 100).map(\.entry.target) == ["s4", "s5", "s6"])
        #expect(try storage.auditEntries(after: all[5].id, since: 1040, limit: 100).map(\.entry.target) == ["s6"])
        #expect(try storage.auditEntries(after: all[6].id, since: nil, limit: 100).isEmpty)
        // A second instance (another process) sees them and continues the ids.
        let peer = try instance.peer()
        try peer.appendAudit([AuditEntry(at: 2000, actor: .cli(user: "ops"), action: .import, target: "p")])
        let next = try storage.auditEntries(after: all[6].id, since: nil, limit: 100)
        #expect(next.map(\.entry.target) == ["p"] && next[0].id > all[6].id)
    }

    @Test func theSQLiteTableRefusesUpdateAndDeleteAndAnOlderDatabaseMigrates() throws {
        let folder = try TestFolder()
        let path = folder.url.appendingPathComponent("server.sqlite").path
        // A database of the schema before the audit log, with a credential in it.
        let old = try Database(path: path)
        _ = try old.migrate(Array(SQLiteSchema.migrations.prefix(4)))
        try old.execute("INSERT INTO credentials (hash, listing_id, kind, created_at) VALUES (x'00', '000000000000', 'staff-token', 1)")
        #expect(try old.scalarInteger("SELECT count(*) FROM sqlite_master WHERE name = 'audit'") == 0)
        let storage = try SQLiteStorage(path: path)
        #expect(try old.scalarInteger("SELECT max(version) FROM schema_version") == Int64(SQLiteSchema.migrations.count))
        #expect(try storage.credentials().count == 1)
        try storage.appendAudit([AuditEntry(at: 1, actor: .cli(user: "ops"), action: .staffTokenCreate, target: "000000000000")])
        #expect(try storage.auditEntries(after: 0, since: nil, limit: 10).count == 1)
        #expect(throws: SQLiteError.self) { try old.execute("DELETE FROM audit") }
        #expect(throws: SQLiteError.self) { try old.execute("UPDATE audit SET result = 'error'") }
        #expect(throws: SQLiteError.self) { try old.execute("INSERT INTO audit (at, actor_kind, actor_id, action, result) VALUES (1, 'cli', 'x', 'import', 'fine')") }
        #expect(try storage.auditEntries(after: 0, since: nil, limit: 10).map(\.entry.result) == [.ok])
    }

    @Test func thePostgreSQLTableRefusesUpdateAndDeleteAndAnOlderDatabaseMigrates() throws {
        let database = try PostgresCluster.shared().createDatabase("audit")
        let old = try PostgresConnection(database.configuration)
        _ = try old.migrate(Array(PostgresSchema.migrations.prefix(3)), lockKey: PostgresSchema.migrationLock)
        _ = try old.query("INSERT INTO credentials (hash, listing_id, kind, created_at) VALUES ('\\x00', '000000000000', 'staff-token', 1)")
        #expect(try old.query("SELECT to_regclass('audit') IS NULL").first?.bool(0) == true)
        let storage = try PostgresStorage(configuration: database.configuration)
        #expect(storage.schemaVersions.found == 3 && storage.schemaVersions.now == PostgresSchema.migrations.count)
        #expect(try storage.credentials().count == 1)
        try storage.appendAudit([AuditEntry(at: 1, actor: .cli(user: "ops"), action: .staffTokenCreate, target: "000000000000")])
        #expect(throws: PostgresError.self) { try old.query("DELETE FROM audit") }
        #expect(throws: PostgresError.self) { try old.query("UPDATE audit SET result = 'error'") }
        #expect(throws: PostgresError.self) {
            try old.query("INSERT INTO audit (at, actor_kind, actor_id, action, result) VALUES (1, 'cli', 'x', 'import', 'fine')")
        }
        #expect(try storage.auditEntries(after: 0, since: nil, limit: 10).map(\.entry.result) == [.ok])
    }

    @Test func theCommandLineActorIsTheOperatingSystemUser() throws {
        let name = SystemUser.name(environment: [:])
        #expect(!name.isEmpty)
        let folder = try TestFolder()
        #expect(Administration(storage: try SQLiteStorage(path: folder.url.appendingPathComponent("s.sqlite").path)).actor == .cli(user: name))
        #expect(AuditActor.staff(tokenId: "0123456789ab").role == "admin" && AuditActor.cli(user: name).role == nil)
    }

    @Test func resultsAndTimesReadBack() {
        for result in [AuditResult.ok, .error, .refused("conflict")] { #expect(AuditResult(text: result.text) == result) }
        #expect(AuditResult(text: "refused:") == nil && AuditResult(text: "fine") == nil)
        #expect(Timestamp.rfc3339Seconds("2026-12-01T14:00:00Z") == 1_796_133_600)
        #expect(Timestamp.rfc3339Seconds("2026-12-01t15:00:00.250+01:00") == 1_796_133_600)
        #expect(Timestamp.rfc3339Seconds("2026-12-01T13:30:00-00:30") == 1_796_133_600)
        for bad in ["2026-02-30T00:00:00Z", "2026-12-01T14:00:60Z", "2026-12-01T14:00:00", "2026-12-01 14:00:00Z", "99999999999999999999",
                    "2026-12-01T14:00:00.Z", "2026-12-01T14:00:00.1234567890Z", "2026-12-01T14:00:00+1:00", "-026-12-01T14:00:00Z", ""] {
            #expect(Timestamp.rfc3339Seconds(bad) == nil, "\(bad)")
        }
        #expect(AuditEntry(at: 0, actor: .cli(user: "x"), action: .import, target: String(repeating: "é", count: 500)).target?.count == 200)
    }
}
