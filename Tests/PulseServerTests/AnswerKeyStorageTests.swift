import Foundation
import PulseCore
import PulseCrypto
import PulsePostgres
import PulsePostgresTesting
import PulseSQLite
import PulseTestSupport
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseSyncAPI

/// The answer-signing keys (issue 21) on every backend: one key however it starts, rotation's schedule
/// (published at once, signing from now + lead, the old key published until its last signature expired),
/// the data folder's answer-key.pem, the migrations that add them, and the admin commands.
@Suite struct AnswerKeyStorageTests {
    static func keyStorage(_ storage: any ServerStorage) throws -> any AnswerKeyStorage {
        try #require(storage as? any AnswerKeyStorage)
    }

    @Test(arguments: StorageBackend.all)
    func aKeyIsAdoptedOnlyIntoAnEmptySetAndRotationSchedules(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        let storage = try Self.keyStorage(instance.storage)
        let adopted = try P256.PrivateKey()
        let first = try storage.prepareAnswerKeys(adopting: adopted, signingFor: nil, at: 1000)
        #expect(first.map(\.kid) == [adopted.publicKey.jwkThumbprint] && first[0].signsFrom == 0 && first[0].signsUntil == nil)
        #expect(first[0].ttl == 0, "no server has signed with it yet")
        // Another start (another instance, another file) adds nothing; a server about to sign records its TTL.
        let again = try Self.keyStorage(try instance.peer()).prepareAnswerKeys(adopting: try P256.PrivateKey(), signingFor: 3600, at: 1001)
        #expect(again.map(\.kid) == first.map(\.kid) && again[0].ttl == 3600)

        let ttl: Int64 = 3600
        let rotated = try storage.rotateAnswerKey(lead: 600, at: 2000)
        let keys = try storage.answerKeys()
        #expect(keys.map(\.kid) == [adopted.publicKey.jwkThumbprint, rotated.kid])
        #expect(keys[0].signsUntil == 2600 && keys[1].signsFrom == 2600 && keys[1].signsUntil == nil && keys[1].serial > keys[0].serial)
        #expect(rotated.ttl == 3600, "the new key inherits the TTL")
        // Before the lead has passed the old key signs; both are published; then the new one signs.
        #expect(AnswerKeyring.signer(keys, at: 2599)?.kid == adopted.publicKey.jwkThumbprint)
        #expect(AnswerKeyring.signer(keys, at: 2600)?.kid == rotated.kid)
        #expect(AnswerKeyring.published(keys, at: 2000, ttl: ttl).keys.map(\.kid) == keys.map(\.kid))
        #expect(AnswerKeyring.published(keys, at: 2000, ttl: ttl).keys[0].retiresAt == 2600 + 3600)
        // The old key is published until its last signature expired, then no more; the generation is the newest key's.
        #expect(AnswerKeyring.published(keys, at: 6200, ttl: ttl).keys.count == 2)
        #expect(AnswerKeyring.published(keys, at: 6201, ttl: ttl).keys.map(\.kid) == [rotated.kid])
        #expect(AnswerKeyring.published(keys, at: 6201, ttl: ttl).seq == Int(keys[1].serial))
        // A rotation after that removes it from the database.
        let third = try storage.rotateAnswerKey(lead: 0, at: 7000)
        #expect(try storage.answerKeys().map(\.kid) == [rotated.kid, third.kid])
        // And an empty-set adoption never brings a retired key back.
        #expect(try storage.prepareAnswerKeys(adopting: adopted, signingFor: nil, at: 8000).map(\.kid) == [rotated.kid, third.kid])
    }

    /// `rotate --answer-ttl` had to equal serve's `--answer-ttl`, and nothing enforced it: a rotation told 3600
    /// while the servers signed for 7200 removed the old key an hour before its last answer expired, and devices
    /// refused those answers (rule signature, unknown key). The TTL is now kept with the keys: a server raises it
    /// before it signs (never lowers it: another instance may sign longer), a rotated key inherits it, the
    /// default lead is it, and a rotation removes a key only after its own `signsUntil` + TTL.
    @Test(arguments: StorageBackend.all)
    func theAnswerTTLIsKeptWithTheKeysSoNoRotationRemovesAKeyEarly(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        let storage = try Self.keyStorage(instance.storage)
        let first = try storage.prepareAnswerKeys(adopting: nil, signingFor: 3600, at: 1000)[0]
        #expect(try Self.keyStorage(try instance.peer()).prepareAnswerKeys(adopting: nil, signingFor: 7200, at: 1001).map(\.ttl) == [7200])
        #expect(try storage.prepareAnswerKeys(adopting: nil, signingFor: 3600, at: 1002).map(\.ttl) == [7200], "a shorter TTL never lowers it")
        let second = try storage.rotateAnswerKey(lead: nil, at: 2000)
        #expect(second.ttl == 7200 && second.signsFrom == 2000 + 7200, "the new key inherits the TTL, and the default lead is it")
        let stopped = try #require(try storage.answerKeys().first)
        #expect(stopped.kid == first.kid && stopped.signsUntil == 9200 && stopped.retiresAt() == 9200 + 7200)
        #expect(AnswerKeyring.published(try storage.answerKeys(), at: 9200 + 7200, ttl: 3600).keys.count == 2,
            "a server signing for 3600 still publishes it: the recorded TTL wins")
        // An hour after the old key's last signature (all a TTL of 3600 would have waited), a rotation keeps it.
        let third = try storage.rotateAnswerKey(lead: 0, at: 9200 + 3601)
        #expect(try storage.answerKeys().map(\.kid) == [first.kid, second.kid, third.kid])
        // Once its last answer (signed until 9200, valid 7200 s) expired, the next rotation removes it.
        let fourth = try storage.rotateAnswerKey(lead: 0, at: 9200 + 7201)
        #expect(try storage.answerKeys().map(\.kid) == [second.kid, third.kid, fourth.kid])
    }

    @Test(arguments: StorageBackend.all)
    func aRotationReachesTheOtherInstancesKeyring(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        let storage = try Self.keyStorage(instance.storage)
        _ = try storage.prepareAnswerKeys(adopting: nil, signingFor: 60, at: 1)
        let ring = try AnswerKeyring(loading: { try storage.answerKeys() })
        let before = ring.keys(at: try instance.settledGeneration())
        let added = try Self.keyStorage(try instance.peer()).rotateAnswerKey(lead: 0, at: 10)
        let after = ring.keys(at: try instance.settledGeneration())
        #expect(before.count == 1 && after.map(\.kid).last == added.kid)
    }

    /// An older version's `answer-key.pem` is read only when it is there (nothing makes one now), private, and a bad
    /// one is refused without being quoted.
    @Test func theDataFolderKeyIsPrivateAndABadOneIsRefusedUnquoted() throws {
        let folder = try TestFolder()
        let data = try DataFolder.prepare(folder.url.appendingPathComponent("data").path)
        #expect(try AnswerKeyFile.existing(in: data) == nil)
        #expect(!FileManager.default.fileExists(atPath: data.answerKeyPath))
        let key = try P256.PrivateKey()
        #expect(FileManager.default.createFile(atPath: data.answerKeyPath, contents: Data(try key.pemRepresentation().copyBytes()), attributes: [.posixPermissions: 0o600]))
        #expect(try AnswerKeyFile.existing(in: data)?.publicKey == key.publicKey)
        let secret = "-----BEGIN PRIVATE KEY-----\nNOTAKEYBUTASECRETLINE\n-----END PRIVATE KEY-----\n"
        try Data(secret.utf8).write(to: URL(fileURLWithPath: data.answerKeyPath))
        do {
            _ = try AnswerKeyFile.existing(in: data)
            Issue.record("a bad key file was accepted")
        } catch {
            #expect("\(error)".contains("not a P-256 private key") && !"\(error)".contains("NOTAKEY"))
        }
        chmod(data.answerKeyPath, 0o644)
        #expect(throws: ServerError.self) { try AnswerKeyFile.existing(in: data) }
    }

    /// The database is the only source: a box makes its first answer key there and writes no file; a folder that
    /// an older version gave an `answer-key.pem` keeps signing with that key (adopted while the table is empty).
    @Test func theFirstKeyIsMadeInTheDatabaseAndAnOlderFolderFileIsAdopted() throws {
        let folder = try TestFolder()
        let fresh = folder.url.appendingPathComponent("fresh").path
        #expect(CLI.run(["admin", "answer-key", "list", "--data", fresh]).code == 0)
        #expect(try DataFolder.existing(fresh).openStorage().answerKeys().count == 1)
        #expect(!FileManager.default.fileExists(atPath: try DataFolder.existing(fresh).answerKeyPath), "no answer-key.pem is made")

        let older = try DataFolder.prepare(folder.url.appendingPathComponent("older").path)
        let key = try P256.PrivateKey()
        #expect(FileManager.default.createFile(atPath: older.answerKeyPath, contents: Data(try key.pemRepresentation().copyBytes()), attributes: [.posixPermissions: 0o600]))
        let listed = CLI.run(["admin", "answer-key", "list", "--data", older.url.path, "--json"])
        #expect(listed.code == 0, "\(listed.text)")
        let keys = try JSONValue.parse(Data(listed.out.joined(separator: "\n").utf8)).arrayValue ?? []
        #expect(keys.count == 1 && keys.first?["kid"]?.stringValue == key.publicKey.jwkThumbprint)
    }

    @Test func anOlderSQLiteDatabaseMigrates() throws {
        let folder = try TestFolder()
        let path = folder.url.appendingPathComponent("server.sqlite").path
        let old = try Database(path: path)
        _ = try old.migrate(Array(SQLiteSchema.migrations.prefix(6)))
        #expect(try old.scalarInteger("SELECT count(*) FROM sqlite_master WHERE name = 'answer_keys'") == 0)
        let storage = try SQLiteStorage(path: path)
        #expect(try old.scalarInteger("SELECT max(version) FROM schema_version") == Int64(SQLiteSchema.migrations.count))
        #expect(try storage.answerKeys().isEmpty)
        #expect(try storage.prepareAnswerKeys(adopting: nil, signingFor: nil, at: 5).count == 1)
        #expect(throws: SQLiteError.self) {
            try old.execute("INSERT INTO answer_keys (kid, private_key, signs_from, signs_until, serial, added_at) VALUES ('k', x'00', 10, 5, 9, 1)")
        }
    }

    @Test func anOlderPostgreSQLDatabaseMigrates() throws {
        let database = try PostgresCluster.shared().createDatabase("answerkeys")
        let old = try PostgresConnection(database.configuration)
        _ = try old.migrate(Array(PostgresSchema.migrations.prefix(5)), lockKey: PostgresSchema.migrationLock)
        #expect(try old.query("SELECT to_regclass('answer_keys') IS NULL").first?.bool(0) == true)
        let storage = try PostgresStorage(configuration: database.configuration)
        #expect(storage.schemaVersions.found == 5 && storage.schemaVersions.now == PostgresSchema.migrations.count)
        #expect(try storage.answerKeys().isEmpty)
        #expect(try storage.prepareAnswerKeys(adopting: nil, signingFor: nil, at: 5).count == 1)
        #expect(throws: PostgresError.self) {
            try old.query("INSERT INTO answer_keys (kid, private_key, signs_from, signs_until, serial, added_at) VALUES ('k', '\\x00', 10, 5, 9, 1)")
        }
    }

    /// A key stored before its TTL was recorded signed with a TTL nobody knows: the migration gives it the
    /// longest serve accepts, so no rotation removes it early.
    @Test func keysStoredBeforeTheirTTLWasRecordedGetTheLongest() throws {
        let folder = try TestFolder()
        let path = folder.url.appendingPathComponent("server.sqlite").path
        let old = try Database(path: path)
        _ = try old.migrate(Array(SQLiteSchema.migrations.prefix(8)))
        let pem = try P256.PrivateKey().pemRepresentation().copyBytes()
        try old.prepare("INSERT INTO answer_keys (kid, private_key, signs_from, signs_until, serial, added_at) VALUES ('k', ?, 0, NULL, 1, 1)").run([.blob(pem)])
        #expect(try SQLiteStorage(path: path).answerKeys().map(\.ttl) == [AnswerKeyRecord.maxTTL])

        let database = try PostgresCluster.shared().createDatabase("answerttl")
        let postgres = try PostgresConnection(database.configuration)
        _ = try postgres.migrate(Array(PostgresSchema.migrations.prefix(7)), lockKey: PostgresSchema.migrationLock)
        _ = try postgres.query(
            "INSERT INTO answer_keys (kid, private_key, signs_from, signs_until, serial, added_at) VALUES ('k', $1, 0, NULL, 1, 1)", [.bytes(pem)])
        #expect(try PostgresStorage(configuration: database.configuration).answerKeys().map(\.ttl) == [AnswerKeyRecord.maxTTL])
    }

    @Test(arguments: StorageBackend.all)
    func aSeriesGenerationGrowsWithEveryImportThatChangesIt(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        let storage = instance.storage
        _ = try storage.importContent(
            TestContent.plan([TestContent.session("talk", series: "conf")], series: [TestContent.series("conf", sessions: ["talk"])]), options: ImportOptions(), at: 5)
        let first = try #require(try storage.series(id: "conf")).generation
        let sessions = [TestContent.session("talk", series: "conf"), TestContent.session("lab", series: "conf")]
        _ = try storage.importContent(TestContent.plan(sessions, series: [TestContent.series("conf", sessions: ["talk", "lab"])]), options: ImportOptions(), at: 10)
        #expect(try #require(try storage.series(id: "conf")).generation == first + 1)
    }

    @Test func theAdminCommandsRotateAndList() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let listed = CLI.run(["admin", "answer-key", "list", "--data", data, "--json"])
        #expect(listed.code == 0, "\(listed.text)")
        let before = try JSONValue.parse(Data(listed.out.joined(separator: "\n").utf8)).arrayValue ?? []
        #expect(before.count == 1 && before[0]["signsUntil"] == nil)
        let rotated = CLI.run(["admin", "answer-key", "rotate", "--data", data, "--lead", "120"])
        #expect(rotated.code == 0, "\(rotated.text)")
        let kid = try #require(rotated.out.first)
        let after = CLI.run(["admin", "answer-key", "list", "--data", data])
        #expect(after.code == 0 && after.out.count == 2 && after.out[1].hasPrefix(kid) && after.out[0].contains("retires "), "\(after.text)")
        // The TTL is the database's: a rotation is not told one (it could only get it wrong).
        #expect(CLI.run(["admin", "answer-key", "rotate", "--data", data, "--answer-ttl", "600"]).code == 64)
        let storage = try DataFolder.existing(data).openStorage()
        #expect(try storage.auditEntries(after: 0, since: nil, limit: 10).map(\.entry.action) == [.answerKeyRotate])
        #expect(try storage.answerKeys().map(\.kid).last == kid)
        #expect(!FileManager.default.fileExists(atPath: try DataFolder.existing(data).answerKeyPath), "the keys are the database's alone")
    }
}
