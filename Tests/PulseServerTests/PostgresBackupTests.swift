import Foundation
import PulseCore
import PulseCrypto
import PulsePostgresTesting
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseServer
@testable import PulseServerStorage

/// Backups of a server on PostgreSQL are PostgreSQL's own: `pg_dump -Fc` of the event's database, `pg_restore`
/// into a fresh cluster, and `pulse-server serve` on it serves the same event to the same device (the device
/// certificate keys live in the database, so they travel in the dump). docs/operations.md gives the procedure.
@Suite(.serialized) struct PostgresBackupTests {
    static func tool(_ name: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = try PostgresCluster.findBinaries().appendingPathComponent(name)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        try #require(process.terminationStatus == 0, "\(name) failed (exit \(process.terminationStatus)): \(text)")
        return text
    }

    @Test func aDumpRestoredIntoAFreshClusterServesTheSameEventToTheSameDevice() throws {
        let folder = try TestFolder()
        let database = try PostgresCluster.shared().createDatabase("dump")
        let (code, staff) = try {
            let storage = try PostgresStorage(configuration: database.configuration, watchChanges: false)
            try TestContent.seed(storage, "talk", state: .live)
            let administration = Administration(storage: storage)
            return (try administration.createDeviceCode(scope: .session("talk")).text, try administration.createStaffToken().text)
        }()
        let environment = ["PULSE_DATABASE_URL": database.url]
        let auth = [("Authorization", "Bearer \(staff)")]
        let first = try ServerProcess(data: nil, ["--access-log", "off"], environment: environment)
        let key = try P256.PrivateKey()
        let enrolled = try first.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: key))
        let device = TestDevice(id: try #require(enrolled.json?["deviceId"]?.stringValue, "\(enrolled.text)"), key: key)
        #expect(try first.client().request("POST", "/api/staff/sessions/talk/advance", auth, body: Array(#"{"maxShown":2}"#.utf8)).status == 200)
        let keys = try first.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: Int64(Date().timeIntervalSince1970))
        #expect(keys.status == 200 && keys.json?["released"]?.arrayValue?.count == 3)
        let certificateKeys = try first.client().request("GET", "/api/sync/device-cert-keys").body

        // pg_dump while the server runs (one snapshot, as pg_dump always takes), then a fresh cluster.
        let dump = folder.url.appendingPathComponent("event.dump").path
        _ = try Self.tool("pg_dump", ["-Fc", "--dbname=\(database.url)", "--file=\(dump)"])
        let fresh = try PostgresCluster()
        defer { fresh.destroy() }
        let target = try fresh.createDatabase("restored")
        _ = try Self.tool("pg_restore", ["--no-owner", "--no-privileges", "--exit-on-error", "--dbname=\(target.url)", dump])

        let second = try ServerProcess(data: nil, ["--access-log", "off"], environment: ["PULSE_DATABASE_URL": target.url])
        let again = try second.client().signed("GET", "/api/sync/keys?session=talk", by: device, at: Int64(Date().timeIntervalSince1970))
        #expect(again.status == 200)
        #expect(again.json?["released"] == keys.json?["released"])
        #expect(try second.client().request("GET", "/api/sync/device-cert-keys").body == certificateKeys)
        let session = try second.client().request("GET", "/api/staff/sessions/talk", auth).json
        #expect(session?["state"] == "live" && session?["maxShown"] == 2)
        // A device the restored cluster never saw is unknown there; the code spent before the dump stays spent.
        let stranger = TestDevice(id: try DeviceID.generate(), key: try P256.PrivateKey())
        #expect(try second.client().signed("GET", "/api/sync/keys?session=talk", by: stranger, at: Int64(Date().timeIntervalSince1970)).status == 404)
        #expect(try second.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: try P256.PrivateKey())).status == 404)
    }
}
