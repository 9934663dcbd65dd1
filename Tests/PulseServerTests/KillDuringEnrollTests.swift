import Foundation
import PulseCrypto
import PulseSQLite
import PulseServer
import PulseTestSupport
import SyncTestSupport
import PulseServerStorage
import Testing

/// kill -9 in the middle of a burst of enrolls: a child process (this test bundle, running only the
/// helper below) enrolls devices on four threads and reports each enroll after it returned; the test
/// kills it at a random moment, then checks the database is consistent, no device code enrolled two
/// devices, and every reported enroll is there.
@Suite struct KillDuringEnrollTests {
    static let childVariable = "PULSE_SERVER_ENROLL_CHILD"
    static let codesPerRound = 400

    @Test func everyAnsweredEnrollSurvivesAKillAndNoCodeIsUsedTwice() throws {
        let folder = try TestFolder()
        let path = folder.url.appendingPathComponent("pulse-server.sqlite").path
        let storage = try SQLiteStorage(path: path)
        try TestContent.seed(storage, "talk")
        var reported: [String: String] = [:]  // device id → code
        var generator = SystemRandomNumberGenerator()
        for round in 0..<6 {
            var codes: [String] = []
            for _ in 0..<Self.codesPerRound {
                let code = try CredentialSecret.newDeviceCode()
                try storage.addCredential(NewCredential(hash: CredentialSecret.hash(code)!, kind: .deviceCode, scope: .session("talk"), createdAt: 1000))
                codes.append(code)
            }
            let codesFile = folder.url.appendingPathComponent("codes-\(round).txt")
            try Data(codes.joined(separator: "\n").utf8).write(to: codesFile)
            let killAfter = Int.random(in: 1...150, using: &generator)
            let lines = try Self.runChild(database: path, codes: codesFile, killAfterLines: killAfter)
            #expect(lines.count >= killAfter, "round \(round): the child reported \(lines.count) enrolls before the kill")
            for line in lines {
                let parts = line.split(separator: " ")
                guard parts.count == 3, parts[0] == "enrolled" else { Issue.record("unexpected child output: \(line)"); continue }
                reported[String(parts[1])] = String(parts[2])
            }
            try Self.checkConsistent(path)
        }
        // Every enroll the child reported is in the database, with the code it used.
        let reopened = try SQLiteStorage(path: path)
        for (id, code) in reported {
            let device = try #require(try reopened.device(id: id), "reported device \(id) is missing")
            #expect(device.credentialId == CredentialSecret.listingId(hash: CredentialSecret.hash(code)!))
        }
        #expect(!reported.isEmpty)
    }

    /// Integrity, foreign keys, and the credential counters matching the devices they enrolled.
    static func checkConsistent(_ path: String) throws {
        let database = try Database(path: path)
        #expect(try database.scalarText("PRAGMA integrity_check") == "ok")
        #expect(try database.cached("PRAGMA foreign_key_check").rows { $0.string(0) }.isEmpty)
        let twice = try database.scalarInteger("SELECT count(*) FROM (SELECT credential_hash FROM devices GROUP BY credential_hash HAVING count(*) > 1)")
        #expect(twice == 0, "a device code enrolled more than one device")
        let mismatched = try database.scalarInteger("""
            SELECT count(*) FROM credentials c
            WHERE c.devices_enrolled <> (SELECT count(*) FROM devices d WHERE d.credential_hash = c.hash)
               OR (c.kind = 'device-code' AND (c.used_at IS NULL) <> (c.devices_enrolled = 0))
            """)
        #expect(mismatched == 0, "a credential's counters disagree with its devices")
    }

    /// Runs the helper in a child process, reads its lines until `killAfterLines`, kills it with
    /// SIGKILL, then reads what it had written before it died.
    static func runChild(database: String, codes: URL, killAfterLines: Int) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--testing-library", "swift-testing", "--filter", "KillDuringEnrollTests/enrollUntilKilled"]
        var environment = ProcessInfo.processInfo.environment
        environment[childVariable] = database + "\n" + codes.path
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var buffer = Data()
        var lines: [String] = []
        var killed = false
        while true {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }  // end of file: the child is gone
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: 0x0a) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                if line.hasPrefix("enrolled ") { lines.append(line) }
            }
            if !killed && lines.count >= killAfterLines {
                // A random moment within the next few commits (each waits for one fsync), so the kill
                // lands inside a transaction as often as between two.
                usleep(UInt32.random(in: 0...4000))
                kill(process.processIdentifier, SIGKILL)
                killed = true
            }
        }
        process.waitUntilExit()
        return lines
    }

    /// The child: enrolls with every code on four threads (each code tried twice), printing
    /// `enrolled <deviceId> <code>` once `enroll` has returned. Runs only in the child process.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[childVariable] != nil))
    func enrollUntilKilled() throws {
        let setting = try #require(ProcessInfo.processInfo.environment[Self.childVariable]).split(separator: "\n").map(String.init)
        let storage = try SQLiteStorage(path: setting[0], connections: 4)
        let codes = try String(contentsOfFile: setting[1], encoding: .utf8).split(separator: "\n").map(String.init)
        let attempts = codes + codes.reversed()
        let out = NSLock()
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for index in stride(from: worker, to: attempts.count, by: 4) {
                let code = attempts[index]
                guard let id = try? DeviceID.generate(),
                      let device = try? storage.enroll(
                        credentialHash: CredentialSecret.hash(code)!, device: NewDevice(id: id, publicKey: [1], platform: "ios", name: "child"), at: 1100)
                else { continue }
                out.withLock { FileHandle.standardOutput.write(Data("enrolled \(device.id) \(code)\n".utf8)) }
            }
        }
    }
}
