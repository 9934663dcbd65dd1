import Foundation
import PulseCore
import PulseCrypto
import PulseSQLite
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Synchronization
import Testing
@testable import PulseServer
@testable import PulseServerStorage
import PulseServerBackup

/// `pulse-server backup` and `restore` (issue 19, item 6) on the real executable.
@Suite(.serialized) struct BackupRestoreTests {
    /// Runs the built `pulse-server` with `arguments` to its end.
    static func tool(_ arguments: [String]) throws -> CLI.Result {
        let process = Process()
        process.executableURL = ServerProcess.binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { $0.key != "PULSE_DATABASE_URL" }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        func lines(_ data: Data) -> [String] { String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init) }
        return CLI.Result(code: process.terminationStatus, out: lines(outData), err: lines(errData))
    }

    /// What a data folder's database holds, read in one snapshot.
    struct Committed: Equatable {
        var devices: Set<String> = []
        var frontier = -1
        var usedCodes: Set<String> = []
        var unusedCodes: Set<String> = []
        var samples: Set<Int64> = []

        init(_ path: String) throws {
            let database = try Database(path: path, flags: [.readOnly, .noMutex])
            try database.transaction(.deferred) { database in
                devices = Set(try database.prepare("SELECT id FROM devices").rows { $0.string(0) })
                frontier = Int(try database.scalarInteger("SELECT max_shown FROM sessions WHERE id = 'talk'") ?? -1)
                let codes = try database.prepare("SELECT listing_id, used_at IS NOT NULL FROM credentials WHERE kind = 'device-code'")
                    .rows([]) { ($0.string(0), $0.bool(1)) }
                for (listing, used) in codes {
                    if used { usedCodes.insert(listing) } else { unusedCodes.insert(listing) }
                }
                samples = Set(try database.prepare("SELECT id FROM diag_samples").rows { $0.int64(0) })
            }
        }
    }

    /// The load's stop flag and answered counts, shared with its threads.
    final class Load: Sendable {
        let stop = Mutex(false)
        let answered = Mutex([0, 0, 0])
    }

    static func diagBody(_ n: Int) -> [UInt8] { Array(#"{"build":"1.0.\#(n)","platform":"ios","online":true}"#.utf8) }

    /// Mid-event under load: devices enrolled, the presenter advancing, diag samples and key fetches going on
    /// while `pulse-server backup` runs; restored on a fresh folder, every device, the frontier, every code's
    /// state and every diag sample committed before the backup began is there, and a server on it serves keys
    /// to the same devices (signed with the same keys) and publishes the same certificate key.
    @Test func aBackupMidEventUnderLoadRestoresEveryCommittedWrite() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let codes = try {
            let storage = try DataFolder.prepare(data).openStorage(connections: 2)
            try TestContent.seed(storage, "talk", state: .live)
            return try (0..<200).map { _ in try Administration(storage: storage).createDeviceCode(scope: .session("talk")).text }
        }()
        let staff = try #require(CLI.run(["admin", "staff-token", "create", "--data", data]).out.first)
        let auth = [("Authorization", "Bearer \(staff)")]
        let server = try ServerProcess(data: data, ["--access-log", "off", "--enroll-rate", "100000", "--enroll-burst", "100000"])
        var devices: [TestDevice] = []
        for code in codes.prefix(20) {
            let key = try P256.PrivateKey()
            let enrolled = try server.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: key))
            devices.append(TestDevice(id: try #require(enrolled.json?["deviceId"]?.stringValue, "\(enrolled.text)"), key: key))
        }
        #expect(try server.client().request("POST", "/api/staff/sessions/talk/advance", auth, body: Array(#"{"maxShown":3}"#.utf8)).status == 200)
        for (n, device) in devices.enumerated() {
            let now = Int64(Date().timeIntervalSince1970)
            #expect(try server.client().signed("POST", "/api/sessions/talk/diag", by: device, at: now, body: Self.diagBody(n)).status == 204)
        }

        // Load on three threads of their own until the backup has finished: diag posts, key fetches,
        // enrollments and advances.
        let load = Load()
        let running = server
        let spare = Array(codes.dropFirst(20))
        let enrolled = devices
        let group = DispatchGroup()
        for worker in 0..<3 {
            let thread = Thread {
                defer { group.leave() }
                var step = 0
                while !load.stop.withLock({ $0 }) && step < 20_000 {
                    step += 1
                    let device = enrolled[step % enrolled.count]
                    let now = Int64(Date().timeIntervalSince1970)
                    let ok: Bool
                    switch worker {
                    case 0:
                        let body = Self.diagBody(1000 + step)
                        ok = (try? running.client(timeout: 5).signed("POST", "/api/sessions/talk/diag", by: device, at: now, body: body).status) == 204
                    case 1:
                        ok = (try? running.client(timeout: 5).signed("GET", "/api/sync/keys?session=talk", by: device, at: now).status) == 200
                    default:
                        if step % 2 == 0, step / 2 < spare.count, let key = try? P256.PrivateKey() {
                            let body = TestDevice.enrollBody(token: spare[step / 2], key: key)
                            ok = (try? running.client(timeout: 5).request("POST", "/api/sync/enroll", body: body).status) == 200
                        } else {
                            let advance = Array(#"{"maxShown":\#(min(9, 3 + step / 50))}"#.utf8)
                            ok = (try? running.client(timeout: 5).request("POST", "/api/staff/sessions/talk/advance", auth, body: advance).status) == 200
                        }
                    }
                    if ok { load.answered.withLock { $0[worker] += 1 } }
                }
            }
            group.enter()
            thread.start()
        }
        let backupFile = folder.url.appendingPathComponent("backups/event.backup").path
        try FileManager.default.createDirectory(atPath: folder.url.appendingPathComponent("backups").path, withIntermediateDirectories: true)
        // The backup, once every kind of load is flowing; what was committed before it began is read first.
        #expect(eventually(within: 20) { load.answered.withLock { $0.allSatisfy { $0 >= 5 } } })
        let committed = try Committed(data + "/pulse-server.sqlite")
        let answeredBefore = load.answered.withLock { $0 }
        let result = try Self.tool(["backup", "--data", data, "--to", backupFile])
        let answeredDuring = load.answered.withLock { $0 }
        // Load goes on a little after the backup too.
        _ = eventually(within: 5) { load.answered.withLock { $0[0] } >= answeredDuring[0] + 5 }
        load.stop.withLock { $0 = true }
        group.wait()
        #expect(zip(answeredBefore, answeredDuring).allSatisfy { $0 < $1 }, "some load stalled during the backup: \(answeredBefore) → \(answeredDuring)")
        #expect(result.code == 0, "\(result.text)")
        #expect(result.out.first?.hasPrefix("backed up \(data) to \(backupFile): ") == true, "\(result.text)")
        #expect(committed.devices.count >= 20 && committed.samples.count >= 20 && committed.frontier >= 3)
        let afterLoad = try Committed(data + "/pulse-server.sqlite")
        #expect(afterLoad.samples.count > committed.samples.count, "no diag sample was written after the snapshot: the load was not concurrent")
        #expect((try FileManager.default.attributesOfItem(atPath: backupFile)[.posixPermissions] as? Int) == 0o600)

        // Restored on a fresh folder: everything committed before the backup began is there.
        let fresh = folder.url.appendingPathComponent("restored").path
        let restore = try Self.tool(["restore", "--from", backupFile, "--data", fresh])
        #expect(restore.code == 0, "\(restore.text)")
        let restored = try Committed(fresh + "/pulse-server.sqlite")
        #expect(restored.devices.isSuperset(of: committed.devices))
        #expect(restored.frontier >= committed.frontier)
        #expect(restored.usedCodes.isSuperset(of: committed.usedCodes))
        #expect(restored.usedCodes.union(restored.unusedCodes) == committed.usedCodes.union(committed.unusedCodes))
        #expect(restored.samples.isSuperset(of: committed.samples))
        // …and no more than the database held once the backup had finished.
        #expect(restored.devices.isSubset(of: afterLoad.devices) && restored.samples.isSubset(of: afterLoad.samples))
        #expect(!FileManager.default.fileExists(atPath: fresh + "/pulse-server.sqlite-wal"))
        // The key is back in its file, 0600, and no copy of it stayed in the database's freed pages.
        let pem = try String(contentsOfFile: data + "/device-cert-key.pem", encoding: .utf8)
        #expect(try String(contentsOfFile: fresh + "/device-cert-key.pem", encoding: .utf8) == pem)
        #expect((try FileManager.default.attributesOfItem(atPath: fresh + "/device-cert-key.pem")[.posixPermissions] as? Int) == 0o600)
        let body = try #require(pem.split(separator: "\n").first { !$0.hasPrefix("-----") })
        #expect(try Data(contentsOf: URL(fileURLWithPath: backupFile)).range(of: Data(body.utf8)) != nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: fresh + "/pulse-server.sqlite")).range(of: Data(body.utf8)) == nil)
        #expect(try Database(path: fresh + "/pulse-server.sqlite", flags: [.readOnly]).applicationID() == 0)
        // The restore is the restored audit log's last row.
        let audit = try DataFolder.existing(fresh).openStorage(connections: 1).auditEntries(after: 0, since: nil, limit: 10_000)
        #expect(audit.last?.entry.action == .restore && audit.last?.entry.target == backupFile && audit.last?.entry.actor.kind == .cli)
        #expect(try Database(path: fresh + "/pulse-server.sqlite", flags: [.readOnly])
            .scalarInteger("SELECT count(*) FROM sqlite_schema WHERE name = 'pulse_backup'") == 0)

        // A second server on it serves keys to the same devices and publishes the same certificate key and the same
        // answer-signing keys (they are the database's: no answer-key.pem is made beside it, none is needed).
        let second = try ServerProcess(data: fresh, ["--access-log", "off"])
        #expect(try second.client().request("GET", "/api/sync/device-cert-keys").body == (try server.client().request("GET", "/api/sync/device-cert-keys").body))
        let answerKeys = try second.client().request("GET", "/api/sync/answer-keys")
        let original = try server.client().request("GET", "/api/sync/answer-keys").body
        #expect(answerKeys.status == 200 && answerKeys.body == original, "\(answerKeys.text)")
        #expect(!FileManager.default.fileExists(atPath: fresh + "/answer-key.pem") && !FileManager.default.fileExists(atPath: data + "/answer-key.pem"))
        for device in devices {
            let keys = try second.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: Int64(Date().timeIntervalSince1970))
            #expect(keys.status == 200, "\(device.id): \(keys.status)")
            #expect(keys.json?["released"]?.arrayValue?.count == min(10, restored.frontier + 1))
        }
        let session = try second.client().request("GET", "/api/staff/sessions/talk", auth).json
        #expect(session?["state"] == "live" && session?["maxShown"]?.intValue == restored.frontier)
    }

    /// restore never replaces a running server's folder; once it has stopped, --replace does, and a device
    /// enrolled before the backup keeps working while one enrolled after it is unknown.
    @Test func restoreRefusesAFolderInUseAndReplacesItOnceStopped() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let codes = try {
            let storage = try DataFolder.prepare(data).openStorage(connections: 2)
            try TestContent.seed(storage, "talk", state: .live)
            return try (0..<2).map { _ in try Administration(storage: storage).createDeviceCode(scope: .session("talk")).text }
        }()
        var server = try ServerProcess(data: data, ["--access-log", "off"])
        func enroll(_ code: String) throws -> TestDevice {
            let key = try P256.PrivateKey()
            let enrolled = try server.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: key))
            return TestDevice(id: try #require(enrolled.json?["deviceId"]?.stringValue), key: key)
        }
        let early = try enroll(codes[0])
        let file = folder.url.appendingPathComponent("b.backup").path
        #expect(try Self.tool(["backup", "--data", data, "--to", file]).code == 0)
        let answerKeys = try server.client().request("GET", "/api/sync/answer-keys").body
        let late = try enroll(codes[1])

        let database = try Data(contentsOf: URL(fileURLWithPath: data + "/pulse-server.sqlite"))
        let refused = try Self.tool(["restore", "--from", file, "--data", data, "--replace"])
        #expect(refused.code != 0)
        #expect(refused.err == ["pulse-server: error: restore: \(data) is in use by a running server; stop it first"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: data + "/pulse-server.sqlite")) == database)
        #expect(try server.client().signed("GET", "/api/sync/keys?session=talk", by: late, at: Int64(Date().timeIntervalSince1970)).status == 200)

        server.signal(SIGTERM)
        #expect(server.waitForExit(within: 10) == 0)
        // An answer-key.pem an older version left in the folder, another key than the database's.
        let legacy = data + "/answer-key.pem"
        #expect(FileManager.default.createFile(atPath: legacy, contents: Data(try P256.PrivateKey().pemRepresentation().copyBytes()), attributes: [.posixPermissions: 0o600]))
        let notReplacing = try Self.tool(["restore", "--from", file, "--data", data])
        #expect(notReplacing.code == 65 && notReplacing.err.first?.contains("add --replace") == true, "\(notReplacing.text)")
        let replaced = try Self.tool(["restore", "--from", file, "--data", data, "--replace"])
        #expect(replaced.code == 0 && replaced.out.first?.contains("replacing what it held") == true, "\(replaced.text)")
        #expect(!FileManager.default.fileExists(atPath: data + "/pulse-server.sqlite-wal"))
        #expect((try FileManager.default.contentsOfDirectory(atPath: data)).filter { $0.hasPrefix(".tmp-") }.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: legacy), "the replaced state's answer key file is gone")

        server = try ServerProcess(data: data, ["--access-log", "off"])
        #expect(try server.client().request("GET", "/api/sync/answer-keys").body == answerKeys, "the answer keys are the backup's")
        #expect(!FileManager.default.fileExists(atPath: legacy))
        let now = Int64(Date().timeIntervalSince1970)
        #expect(try server.client().signed("GET", "/api/sync/keys?session=talk", by: early, at: now).status == 200)
        #expect(try server.client().signed("GET", "/api/sync/keys?session=talk", by: late, at: now).status == 404)
    }

    /// A serve started while a restore holds the folder refuses to start (one line, exit 1) instead of opening
    /// files about to be replaced; it starts once the lock is let go. backup --json prints its fields.
    @Test func aServeStartedDuringARestoreWaitsForIt() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let dataFolder = try DataFolder.prepare(data)
        try TestContent.seed(try dataFolder.openStorage(connections: 2), "talk", state: .live)
        let file = folder.url.appendingPathComponent("b.backup").path
        let json = try Self.tool(["backup", "--data", data, "--to", file, "--json"])
        #expect(json.code == 0, "\(json.text)")
        let fields = try JSONValue.parse(Data(json.out.joined().utf8))
        #expect(fields["sessions"] == 1 && fields["schemaVersion"]?.intValue == SQLiteStorage.schemaVersion && fields["file"]?.stringValue == file)

        let held = try #require(try dataFolder.lock(.exclusive))  // as restore holds it
        let refused = try ServerProcess(data: data, ["--access-log", "off"], waitForStart: false)
        #expect(refused.waitForExit(within: 10) == 1)
        #expect(refused.waitForLine("pulse-server: error: \(data) is being restored"), "\(refused.errorLines)")
        held.release()
        let server = try ServerProcess(data: data, ["--access-log", "off"])
        #expect(try server.client().request("GET", "/healthz").status == 200)
        // …and a server holding it shared keeps restore out, also when the restore runs in this process.
        #expect(try dataFolder.lock(.exclusive) == nil)
    }

    /// `kill -9` in the middle of a backup leaves the previous backup whole (still restorable) and the data folder
    /// untouched; at most a `.tmp-*` file is left beside the target.
    @Test func aBackupKilledMidwayLeavesThePreviousOneWhole() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let dataFolder = try DataFolder.prepare(data)
        try TestContent.seed(try dataFolder.openStorage(connections: 2), "talk", state: .live)
        do {
            // Some 60 MB of samples (foreign keys off: no devices needed), so the copy takes a while.
            var options = Database.Options()
            options.foreignKeys = false
            let database = try Database(path: dataFolder.databasePath, options: options)
            try database.execute("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
                INSERT INTO diag_samples (session_id, device_id, received_at, build, platform, connection)
                SELECT 'talk', hex(randomblob(16)), i, '1.0.0', 'ios', hex(randomblob(100)) FROM n
                """)
        }
        let file = folder.url.appendingPathComponent("b.backup").path
        #expect(try Self.tool(["backup", "--data", data, "--to", file]).code == 0)
        let previous = try Data(contentsOf: URL(fileURLWithPath: file))

        for delay in [0.05, 0.3, 0.8] {
            let process = Process()
            process.executableURL = ServerProcess.binary
            process.arguments = ["backup", "--data", data, "--to", file]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let now = try Data(contentsOf: URL(fileURLWithPath: file))
            // Killed before the rename: the old file; after it: a whole new one. Never anything in between.
            if now != previous { #expect(try BackupFile.inspect(file).diagSamples == 200_000, "killed after \(delay) s") }
        }
        // The kills did land mid-copy: their temp files are there (a later backup does not clean them; rm .tmp-*).
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0.hasPrefix(".tmp-b.backup-") }
        #expect(!leftovers.isEmpty, "no kill landed inside a backup")
        #expect(try Database(path: dataFolder.databasePath, flags: [.readOnly]).integrityProblems() == nil)
        let restored = try Self.tool(["restore", "--from", file, "--data", folder.url.appendingPathComponent("restored").path])
        #expect(restored.code == 0 && restored.out.first?.contains("200000 diagnostic samples") == true, "\(restored.text)")
    }

    /// Bad inputs: one clear line each, a non-zero exit, and nothing that was there is damaged.
    @Test func badInputsAreOneLineAndDamageNothing() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        try {
            let storage = try DataFolder.prepare(data).openStorage(connections: 2)
            try TestContent.seed(storage, "talk", state: .live)
        }()
        let good = folder.url.appendingPathComponent("good.backup").path
        #expect(CLI.run(["backup", "--data", data, "--to", good]).code == 0)
        // A populated target, whose files must come out of every failure unchanged.
        let target = folder.url.appendingPathComponent("target").path
        #expect(CLI.run(["restore", "--from", good, "--data", target]).code == 0)
        func snapshot(_ path: String) throws -> [String: Data] {
            var files: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: path) {
                files[name] = try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))
            }
            return files
        }
        let targetBefore = try snapshot(target)
        let goodBytes = try Data(contentsOf: URL(fileURLWithPath: good))

        func write(_ name: String, _ bytes: Data) throws -> String {
            let path = folder.url.appendingPathComponent(name).path
            try bytes.write(to: URL(fileURLWithPath: path))
            return path
        }
        let text = try write("notes.txt", Data("not a backup\n".utf8))
        let truncated = try write("truncated.backup", goodBytes.prefix(goodBytes.count / 2))
        var flipped = goodBytes
        for index in stride(from: flipped.count / 3, to: flipped.count / 3 + 4096, by: 1) { flipped[index] ^= 0x5A }
        let corrupt = try write("corrupt.backup", flipped)
        let newer = try write("newer.backup", goodBytes)
        do {
            let database = try Database(path: newer, options: { var o = Database.Options(); o.writeAheadLog = false; return o }())
            try database.execute("UPDATE pulse_backup SET schema_version = 99; INSERT INTO schema_version (version) VALUES (99)")
        }

        let cases: [(String, [String], String)] = [
            ("missing file", ["restore", "--from", folder.url.appendingPathComponent("nope.backup").path, "--data", target, "--replace"], "nope.backup: no such file"),
            ("a text file", ["restore", "--from", text, "--data", target, "--replace"], "is not a pulse-server backup (not a SQLite file)"),
            ("a live database", ["restore", "--from", data + "/pulse-server.sqlite", "--data", target, "--replace"], "is not a pulse-server backup (make one with"),
            ("truncated", ["restore", "--from", truncated, "--data", target, "--replace"], "is damaged"),
            ("corrupt", ["restore", "--from", corrupt, "--data", target, "--replace"], "is damaged"),
            ("newer schema", ["restore", "--from", newer, "--data", target, "--replace"], "holds schema version 99, newer than this pulse-server knows"),
            ("unwritable target", ["restore", "--from", good, "--data", text + "/data"], "cannot create the data folder"),
            ("occupied target", ["restore", "--from", good, "--data", target], "already holds a pulse-server database"),
            ("backup of no folder", ["backup", "--data", folder.url.appendingPathComponent("none").path, "--to", good], "no such data folder"),
            ("backup to nowhere", ["backup", "--data", data, "--to", text + "/x.backup"], "cannot write beside it"),
            ("backup over a folder", ["backup", "--data", data, "--to", target], "rename"),
            ("backup of PostgreSQL", ["backup", "--data", data, "--to", good, "--database", "postgresql://x@y/z"], "use pg_dump"),
        ]
        for (name, arguments, expected) in cases {
            let result = CLI.run(arguments)
            #expect(result.code != 0, "\(name): exit 0")
            // A usage error (exit 64) adds the hint "See 'pulse-server backup --help'." as its second line.
            let lines = result.code == 64 ? result.err.filter { !$0.hasPrefix("See '") } : result.err
            #expect(lines.count == 1 && result.out.isEmpty, "\(name): \(result.text)")
            #expect(result.err.first?.hasPrefix("pulse-server: error: ") == true && result.err.first?.contains(expected) == true, "\(name): \(result.text)")
            #expect(try snapshot(target) == targetBefore, "\(name) changed the target")
            #expect(try Data(contentsOf: URL(fileURLWithPath: good)) == goodBytes, "\(name) changed the previous backup")
        }
        #expect((try FileManager.default.contentsOfDirectory(atPath: folder.url.path)).filter { $0.hasPrefix(".tmp-") }.isEmpty)
        // A good backup still restores over the target after all that.
        #expect(CLI.run(["restore", "--from", good, "--data", target, "--replace"]).code == 0)
    }
}
