import Foundation
import PulseCore
import PulseCrypto
import PulsePostgres
import PulsePostgresTesting
import PulseServer
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import PulseServerStorage
@testable import PulseServerCLI
import PulseCommandLine
import Testing

/// `--database` / `PULSE_DATABASE_URL` on import and admin, and `migrate` from a SQLite data folder.
@Suite struct PostgresCommandTests {
    /// Runs the CLI in process with `environment` (nothing of this process's own).
    static func run(_ arguments: [String], environment: [String: String] = [:]) -> CLI.Result {
        let capture = Lines()
        let console = Console(out: { capture.add(out: $0) }, err: { capture.add(err: $0) }, environment: environment)
        let code = ServerCommand.main(arguments, console: console)
        return CLI.Result(code: code, out: capture.out, err: capture.err)
    }

    @Test func importAndAdminWorkOnPostgreSQLGivenByOptionOrEnvironment() throws {
        let database = try PostgresCluster.shared().createDatabase("cli")
        let package = try TestPackage(packageId: TestContent.packageAID)
        try package.addSession("talk", series: "conf")
        try package.addSeries("conf", sessions: ["talk"])
        try package.commit()

        let imported = Self.run(["import", "--database", database.url, package.root.path])
        #expect(imported.code == 0, "\(imported.text)")
        #expect(imported.out.first?.hasPrefix("imported package") == true)
        // The environment variable does the same, and no --data is needed.
        let environment = [ServerCommand.databaseVariable: database.url]
        let code = Self.run(["admin", "device-code", "create", "--session", "talk"], environment: environment)
        #expect(code.code == 0, "\(code.text)")
        let text = try #require(code.out.first)
        #expect(Self.run(["admin", "session", "set", "talk", "--state", "live", "--max-shown", "3"], environment: environment).code == 0)
        let list = Self.run(["admin", "session", "list", "--json"], environment: environment)
        #expect(list.code == 0, "\(list.text)")
        guard case let .array(listed) = try JSONValue.parse(Data(list.out.joined(separator: "\n").utf8)) else { Issue.record("not a list"); return }
        #expect(listed.first?["maxShown"] == 3, "\(list.text)")

        // What the commands wrote is in PostgreSQL, hashed.
        let storage = try PostgresStorage(configuration: database.configuration, watchChanges: false)
        #expect(try storage.session(id: "talk")?.state == .live)
        let device = NewDevice(id: try DeviceID.generate(), publicKey: [1], platform: "ios", name: "x")
        #expect(try storage.enroll(credentialHash: CredentialSecret.hash(text)!, device: device, at: TimeTextForTests.now) != nil)
        let tokens = Self.run(["admin", "token", "list"], environment: environment)
        #expect(tokens.code == 0 && tokens.out.count == 1 && tokens.out[0].contains("used"))
        // The audit log on PostgreSQL: the import, the mint, one row per setting, as the CLI's user; read back.
        let user = SystemUser.name(environment: ProcessInfo.processInfo.environment)
        let audit = try storage.auditEntries(after: 0, since: nil, limit: 100).map(\.entry)
        try #require(audit.map(\.action) == [.import, .deviceCodeCreate, .sessionState, .sessionFrontier], "\(audit)")
        #expect(audit.allSatisfy { $0.actor == .cli(user: user) && $0.client == nil && $0.result == .ok })
        #expect(audit[1].target == CredentialSecret.listingId(hash: CredentialSecret.hash(text)!) && audit[2].target == "talk")
        let auditList = Self.run(["admin", "audit", "list", "--json"], environment: environment)
        #expect(try JSONValue.parse(Data(auditList.out.joined(separator: "\n").utf8)).arrayValue?.count == 4, "\(auditList.text)")
        #expect(!auditList.text.contains(text))
        // --database wins over the environment.
        let other = try PostgresCluster.shared().createDatabase("cli")
        #expect(Self.run(["admin", "token", "list", "--database", other.url], environment: environment).out.isEmpty)
    }

    @Test func aDatabaseValueThatIsNoURLOrNoStorageAtAllIsAUsageError() throws {
        let secret = "postgres-password-in-a-file-name"
        let wrong = Self.run(["admin", "token", "list", "--database", "/var/lib/\(secret)"])
        #expect(wrong.code == 64 && wrong.err.first?.contains("--database must be a postgresql:// URL") == true, "\(wrong.text)")
        #expect(!wrong.text.contains(secret))
        let fromEnvironment = Self.run(["admin", "token", "list"], environment: [ServerCommand.databaseVariable: "mysql://x"])
        #expect(fromEnvironment.code == 64 && fromEnvironment.err.first?.contains("PULSE_DATABASE_URL must be a postgresql:// URL") == true)
        let neither = Self.run(["admin", "token", "list"])
        #expect(neither.code == 64 && neither.err.first?.contains("missing --data <dir> (or --database <url>, or PULSE_DATABASE_URL)") == true)
        let unreachable = Self.run(["admin", "token", "list", "--database", "postgresql://u:\(secret)@127.0.0.1:1/db?connect_timeout=2"])
        #expect(unreachable.code == 1 && unreachable.err.count == 1, "\(unreachable.text)")
        #expect(unreachable.err.first?.contains("unavailable") == true && !unreachable.text.contains(secret))
    }

    // MARK: - migrate

    /// A single-box event on SQLite with a bit of everything.
    static func populatedSQLite() throws -> (TestFolder, SQLiteStorage, [String: [UInt8]]) {
        let folder = try TestFolder()
        let data = try DataFolder.prepare(folder.url.appendingPathComponent("data").path)
        _ = try DeviceCertificateKey.loadOrCreate(in: data)
        let storage = try data.openStorage(connections: 2)
        let gated = GatedResource(id: "r1", rule: GateRule(releaseAfterSlide: 3, releaseAt: nil), entry: ["id": "r1", "gated": false])
        _ = try storage.importContent(
            TestContent.plan([TestContent.session("talk", series: "conf"), TestContent.session("lab", slides: 4, gated: [gated], series: "conf")],
                             series: [TestContent.series("conf", sessions: ["talk", "lab"])]),
            options: ImportOptions(), at: 1000)
        // A newer deck for talk: both key tables stay.
        _ = try storage.importContent(TestContent.plan([TestContent.session("talk", deckVersion: 2, slides: 12, seed: "v2", series: "conf")]), options: ImportOptions(), at: 1050)
        var hashes: [String: [UInt8]] = [:]
        hashes["used"] = try StorageSuiteEnrollTests.code(storage)
        hashes["unused"] = try StorageSuiteEnrollTests.code(storage)
        hashes["token"] = SHA256.hash(Array("token".utf8))
        try storage.addCredential(NewCredential(hash: hashes["token"]!, kind: .registrationToken, scope: .series("conf"), maxDevices: 3, createdAt: 1000))
        hashes["staff"] = SHA256.hash(Array("staff".utf8))
        try storage.addCredential(NewCredential(hash: hashes["staff"]!, kind: .staffToken, scope: nil, createdAt: 1000, expiresAt: 99_999))
        let one = try #require(try storage.enroll(credentialHash: hashes["used"]!, device: StorageSuiteEnrollTests.device(1), at: 1100))
        let two = try #require(try storage.enroll(credentialHash: hashes["token"]!, device: StorageSuiteEnrollTests.device(2), at: 1101))
        _ = try storage.revokeDevice(id: two.id, at: 1150)
        _ = try storage.updateSession(id: "talk", SessionUpdate(state: .rehearsal), at: 1200)
        _ = try storage.advance(sessionId: "talk", to: 8, at: 1201)
        _ = try storage.updateSession(id: "talk", SessionUpdate(state: .live, allowDownload: true,
            venueNetworks: [try IPNetwork(parsing: "10.0.0.0/8"), try IPNetwork(parsing: "2001:db8::/32")]), at: 1202)
        _ = try storage.advance(sessionId: "talk", to: 5, at: 1203)
        // Replay keys on the real clock: migrate leaves behind those expired when it runs.
        let now = TimeTextForTests.now
        for (n, at) in [(1, Int64(1300)), (2, 1310), (3, 1320)] {
            let sample = DiagSample(sessionId: "talk", deviceId: one.id, receivedAt: at, build: "1.\(n)", platform: "ios", connection: ["rttMs": .int(n * 10)])
            #expect(try storage.recordSignedRequest(replayKey: [UInt8(n)], expiresAt: now + 3600, sample: sample, at: at))
        }
        #expect(try storage.recordSignedRequest(replayKey: [9], expiresAt: now - 10, sample: nil, at: 1000))
        // Audit rows: one written with its action, two on their own (a hostile target among them).
        let staff = AuditActor.staff(tokenId: CredentialSecret.listingId(hash: hashes["staff"]!))
        _ = try storage.updateSession(id: "lab", SessionUpdate(state: .scheduled), at: 1400,
            audit: [AuditEntry(at: 1400, actor: staff, action: .sessionState, target: "lab", detail: "scheduled", client: "192.0.2.7")])
        try storage.appendAudit([
            AuditEntry(at: 1401, actor: .cli(user: "ops"), action: .deviceRevoke, target: "x\"\n", result: .refused("not-found")),
            AuditEntry(at: 1402, actor: staff, action: .import, target: TestContent.packageA, client: "2001:db8::1", result: .error),
        ])
        return (folder, storage, hashes)
    }

    @Test func migrateMovesAWholeEventAndThePostgreSQLServerAnswersAsTheSQLiteOneDid() throws {
        let (folder, sqlite, hashes) = try Self.populatedSQLite()
        let answerKeys = try sqlite.prepareAnswerKeys(adopting: nil, signingFor: 7200, at: 1500).map(\.kid)
        let database = try PostgresCluster.shared().createDatabase("migrate")
        let data = folder.url.appendingPathComponent("data").path
        let result = Self.run(["migrate", "--from", "sqlite:" + data, "--to", database.url, "--json"])
        #expect(result.code == 0, "\(result.text)")
        #expect(!result.text.contains(database.cluster.applicationPassword))
        let counts = try JSONValue.parse(Data(result.out.joined(separator: "\n").utf8))["tables"]
        #expect(counts == [
            ["table": "credentials", "rows": 4, "leftBehind": 0], ["table": "devices", "rows": 2, "leftBehind": 0],
            ["table": "sessions", "rows": 2, "leftBehind": 0], ["table": "venue_networks", "rows": 2, "leftBehind": 0],
            ["table": "key_tables", "rows": 3, "leftBehind": 0], ["table": "series", "rows": 1, "leftBehind": 0],
            ["table": "series_sessions", "rows": 2, "leftBehind": 0], ["table": "session_changes", "rows": 9, "leftBehind": 0],
            ["table": "replay_keys", "rows": 3, "leftBehind": 1], ["table": "diag_samples", "rows": 3, "leftBehind": 0],
            ["table": "audit", "rows": 3, "leftBehind": 0], ["table": "answer_keys", "rows": 1, "leftBehind": 0],
            ["table": "certificate_keys", "rows": 1, "leftBehind": 0],
        ])

        // Every read answers as the SQLite store does.
        let postgres = try PostgresStorage(configuration: database.configuration)
        #expect(try postgres.answerKeys().map(\.kid) == answerKeys)
        #expect(try postgres.answerKeys().map(\.ttl) == [7200], "each key's answer TTL moves with it")
        #expect(try postgres.credentials() == sqlite.credentials())
        #expect(try postgres.devices() == sqlite.devices())
        #expect(try postgres.sessions() == sqlite.sessions())
        for id in ["talk", "lab"] {
            #expect(try postgres.sessionContent(id: id) == sqlite.sessionContent(id: id))
            #expect(try postgres.changes(sessionId: id, after: 0, limit: 100) == sqlite.changes(sessionId: id, after: 0, limit: 100))
        }
        for (id, deck) in [("talk", 1), ("talk", 2), ("lab", 1)] {
            #expect(try postgres.keyTable(sessionId: id, deckVersion: deck) == sqlite.keyTable(sessionId: id, deckVersion: deck))
        }
        #expect(try postgres.series(id: "conf") == sqlite.series(id: "conf"))
        #expect(try postgres.samples(sessionId: "talk") == sqlite.samples(sessionId: "talk"))
        #expect(try postgres.latestSamples(sessionId: "talk", since: 0) == sqlite.latestSamples(sessionId: "talk", since: 0))
        #expect(try postgres.isStaffToken(hash: hashes["staff"]!, at: 2000))
        let audit = try sqlite.auditEntries(after: 0, since: nil, limit: 100)
        let movedAudit = try postgres.auditEntries(after: 0, since: nil, limit: 100)
        try #require(audit.count == 3)
        #expect(movedAudit == audit)
        // The box's certificate key is the database's: the instances sign with it, its certificates verify.
        let boxKey = try DeviceCertificateKey.loadOrCreate(in: try DataFolder.prepare(data))
        #expect(try postgres.certificateKeys().map(\.keyId) == [boxKey.keyId])
        #expect(try postgres.prepareCertificateKeys(adopting: nil, at: 3000).map(\.keyId) == [boxKey.keyId])

        // And it goes on from there: spent codes stay spent, replay keys still refuse, the cap holds,
        // sequences continue.
        #expect(try postgres.enroll(credentialHash: hashes["used"]!, device: StorageSuiteEnrollTests.device(3), at: 2000) == nil)
        #expect(try postgres.enroll(credentialHash: hashes["unused"]!, device: StorageSuiteEnrollTests.device(4), at: 2000) != nil)
        #expect(try postgres.enroll(credentialHash: hashes["token"]!, device: StorageSuiteEnrollTests.device(5), at: 2000) != nil)
        #expect(try postgres.enroll(credentialHash: hashes["token"]!, device: StorageSuiteEnrollTests.device(6), at: 2000) != nil)
        #expect(try postgres.enroll(credentialHash: hashes["token"]!, device: StorageSuiteEnrollTests.device(7), at: 2000) == nil)  // cap 3
        let device = try #require(try postgres.devices().first)
        let now = TimeTextForTests.now
        #expect(try !postgres.recordSignedRequest(replayKey: [2], expiresAt: now + 600, sample: nil, at: now))
        let sample = DiagSample(sessionId: "talk", deviceId: device.id, receivedAt: 2000, build: "2", platform: "ios", connection: [:])
        #expect(try postgres.recordSignedRequest(replayKey: [9], expiresAt: now + 600, sample: sample, at: now))  // was left behind
        #expect(try postgres.samples(sessionId: "talk").last == sample)
        guard case .advanced(let talk, moved: true) = try postgres.advance(sessionId: "talk", to: 9, at: 2001) else {
            Issue.record("no advance")
            return
        }
        #expect(talk.changeSequence == 8 && talk.maxShown == 9)
        // The audit ids continue after those that moved.
        try postgres.appendAudit([AuditEntry(at: 2002, actor: .cli(user: "ops"), action: .sessionAdvance, target: "talk")])
        #expect(try postgres.auditEntries(after: audit[2].id, since: nil, limit: 10).map(\.id) == [audit[2].id + 1])
    }

    @Test func migrateRefusesATargetWithDataUnlessReplacingAndAMissingSource() throws {
        let (folder, _, _) = try Self.populatedSQLite()
        let database = try PostgresCluster.shared().createDatabase("migrate")
        let data = folder.url.appendingPathComponent("data").path
        #expect(Self.run(["migrate", "--from", "sqlite:" + data, "--to", database.url]).code == 0)
        let again = Self.run(["migrate", "--from", "sqlite:" + data, "--to", database.url])
        #expect(again.code == 65, "\(again.text)")
        #expect(again.err.first?.contains("already holds pulse-server data (credentials 4, devices 2,") == true, "\(again.text)")
        #expect(again.err.first?.contains("pass --replace") == true)
        let replaced = Self.run(["migrate", "--from", "sqlite:" + data, "--to", database.url, "--replace"])
        #expect(replaced.code == 0 && replaced.out.first?.hasSuffix("every count checked") == true, "\(replaced.text)")
        #expect(try PostgresStorage(configuration: database.configuration, watchChanges: false).devices().count == 2)

        let missing = Self.run(["migrate", "--from", "sqlite:" + folder.url.appendingPathComponent("nope").path, "--to", database.url])
        #expect(missing.code == 65 && missing.err.first?.contains("no such database") == true, "\(missing.text)")
        #expect(Self.run(["migrate", "--from", data, "--to", database.url]).code == 64)  // no sqlite: prefix
        #expect(Self.run(["migrate", "--from", "sqlite:" + data]).code == 64)  // no target
    }
}

enum TimeTextForTests {
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }
}
