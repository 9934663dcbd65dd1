import Foundation
import PulseCore
import PulsePostgresTesting
import PulseSystem
import SyncTestSupport
import Testing
@testable import PulseServerStorage

/// `/api/staff/…`: every change appends one audit row (one per setting of a session change) as the staff
/// token's listing id, role admin, from the client's address, done or refused; `GET audit` pages them and
/// refuses hostile queries with 400.
@Suite struct AuditStaffAPITests {
    /// A harness on SQLite, or on a fresh PostgreSQL database.
    static func harness(_ backend: String, _ name: String = #function) throws -> SyncHarness {
        guard backend == "PostgreSQL" else { return try SyncHarness(name) }
        let database = try PostgresCluster.shared().createDatabase("audit")
        return try SyncHarness(name, storage: { withExtendedLifetime(database) {}; return try PostgresStorage(configuration: database.configuration) })
    }

    @Test(arguments: ["SQLite", "PostgreSQL"])
    func everyStaffChangeAppendsOneRow(_ backend: String) throws {
        let harness = try Self.harness(backend)
        try harness.seed(["talk"], series: "conf")
        let staff = try harness.staffToken()
        let staffId = CredentialSecret.listingId(hash: try #require(CredentialSecret.hash(staff)))
        let actor = AuditActor.staff(tokenId: staffId, role: "admin")
        var last = try harness.storage.auditEntries(after: 0, since: nil, limit: 1000).last?.id ?? 0
        /// Calls the route, returns its status and the rows it appended.
        func call(_ method: String, _ path: String, _ body: JSONValue? = nil, token: String? = nil) throws -> (Int, JSONValue?, [AuditEntry]) {
            let response = try harness.client().request(
                method, "/api/staff/" + path, [("Authorization", "Bearer \(token ?? staff)")], body: body?.canonicalBytes ?? [])
            let rows = try harness.storage.auditEntries(after: last, since: nil, limit: 1000)
            last = rows.last?.id ?? last
            return (response.status, response.json, rows.map(\.entry))
        }
        func expectOne(
            _ call: (Int, JSONValue?, [AuditEntry]), status: Int, _ action: AuditAction, target: String?, result: AuditResult = .ok,
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            #expect(call.0 == status && call.2.count == 1, "\(call.0) \(call.2)", sourceLocation: sourceLocation)
            guard let row = call.2.first else { return }
            #expect(row.action == action && row.target == target && row.result == result, "\(row)", sourceLocation: sourceLocation)
            #expect(row.actor == actor && row.client == "127.0.0.1" && row.at == harness.clock.seconds, "\(row)", sourceLocation: sourceLocation)
        }

        let code = try call("POST", "device-codes", ["session": "talk"])
        let codeId = try #require(code.1?["id"]?.stringValue)
        expectOne(code, status: 201, .deviceCodeCreate, target: codeId)
        expectOne(try call("POST", "device-codes", ["session": "talk", "series": "conf"]), status: 400, .deviceCodeCreate, target: nil, result: .refused("bad-input"))
        expectOne(try call("POST", "device-codes", ["session": "nope"]), status: 404, .deviceCodeCreate, target: nil, result: .refused("not-found"))
        let token = try call("POST", "registration-tokens", ["series": "conf", "maxDevices": 2])
        expectOne(token, status: 201, .registrationTokenCreate, target: try #require(token.1?["id"]?.stringValue))
        expectOne(try call("POST", "registration-tokens", ["series": "conf", "maxDevices": -1]), status: 400, .registrationTokenCreate, target: nil,
                  result: .refused("bad-input"))
        let minted = try call("POST", "staff-tokens", ["expires": "2h"])
        let mintedId = try #require(minted.1?["id"]?.stringValue)
        expectOne(minted, status: 201, .staffTokenCreate, target: mintedId)
        #expect(minted.2.first?.detail == "role admin, expires \(TimeText.iso(harness.clock.seconds + 7200))")

        expectOne(try call("POST", "tokens/revoke", ["token": .string(codeId)]), status: 200, .tokenRevoke, target: codeId)
        expectOne(try call("POST", "tokens/revoke", ["token": .string(codeId)]), status: 404, .tokenRevoke, target: codeId, result: .refused("not-found"))
        let mintedSecret = try #require(minted.1?["secret"]?.stringValue)
        expectOne(try call("POST", "tokens/revoke", ["token": .string(mintedSecret)]), status: 200, .staffTokenRevoke, target: mintedId)
        expectOne(try call("POST", "tokens/revoke", ["withDevices": true]), status: 400, .tokenRevoke, target: nil, result: .refused("bad-input"))

        let device = try harness.device(for: .session("talk"))
        last = try harness.storage.auditEntries(after: 0, since: nil, limit: 1000).last?.id ?? 0  // the harness's own mint
        expectOne(try call("POST", "devices/\(device.id)/revoke"), status: 200, .deviceRevoke, target: device.id)
        expectOne(try call("POST", "devices/\(device.id)/revoke"), status: 404, .deviceRevoke, target: device.id, result: .refused("not-found"))

        expectOne(try call("POST", "sessions/talk/advance", ["maxShown": 3]), status: 409, .sessionAdvance, target: "talk", result: .refused("conflict"))
        expectOne(try call("POST", "sessions/talk/advance", ["maxShown": -3]), status: 400, .sessionAdvance, target: "talk", result: .refused("bad-input"))
        expectOne(try call("PATCH", "sessions/talk", ["state": "live"]), status: 200, .sessionState, target: "talk")
        let rules = try call("POST", "sessions/talk", ["allowDownload": true, "venueNetworks": ["10.20.0.0/16"]])
        #expect(rules.0 == 200 && rules.2.map(\.action) == [.sessionDownloadRule, .sessionVenueRule] && rules.2.allSatisfy { $0.result == .ok })
        expectOne(try call("POST", "sessions/talk", [:]), status: 400, .sessionSet, target: "talk", result: .refused("bad-input"))
        expectOne(try call("POST", "sessions/talk", ["state": "paused"]), status: 400, .sessionSet, target: "talk", result: .refused("bad-input"))
        expectOne(try call("POST", "sessions/nope", ["state": "live"]), status: 404, .sessionState, target: "nope", result: .refused("not-found"))
        let advanced = try call("POST", "sessions/talk/advance", ["maxShown": 3])
        expectOne(advanced, status: 200, .sessionAdvance, target: "talk")
        #expect(advanced.2.first?.detail == "to 3")

        // Not actions: reads, unknown routes, and a token that does not authenticate.
        for (method, path) in [("GET", "sessions"), ("GET", "tokens"), ("GET", "audit"), ("POST", "nothing"), ("DELETE", "audit")] {
            #expect(try call(method, path).2.isEmpty, "\(method) \(path)")
        }
        let refused = try call("POST", "device-codes", ["session": "talk"], token: mintedSecret)
        #expect(refused.0 == 401 && refused.2.isEmpty)

        // No row holds a secret.
        let everything = try harness.storage.auditEntries(after: 0, since: nil, limit: 1000).map { "\($0)" }.joined()
        #expect(!everything.contains(staff) && !everything.contains(mintedSecret))
    }

    @Test(arguments: ["SQLite", "PostgreSQL"])
    func theAuditRoutePagesAndRefusesHostileQueries(_ backend: String) throws {
        let harness = try Self.harness(backend)
        let staff = try harness.staffToken()
        for n in 0..<5 {
            try harness.storage.appendAudit([AuditEntry(
                at: 1_800_000_000 + Int64(n) * 60, actor: .cli(user: "ops"), action: .sessionAdvance, target: "s\(n)\"\n", client: nil)])
        }
        func get(_ query: String, token: String? = nil) throws -> (Int, JSONValue?) {
            let response = try harness.client().request("GET", "/api/staff/audit" + query, [("Authorization", "Bearer \(token ?? staff)")])
            return (response.status, response.json)
        }
        let all = try get("")
        #expect(all.0 == 200 && all.1?["more"] == false)
        let entries = try #require(all.1?["entries"]?.arrayValue)
        // The staff token's own mint (the harness as cli) and the five.
        try #require(entries.count == 6)
        #expect(entries[1]["target"] == "s0\"\n" && entries[1]["actor"] == ["kind": "cli", "id": "ops", "role": .null])
        #expect(entries[1]["at"] == "2027-01-15T08:00:00Z" && entries[1]["client"] == .null && entries[1]["result"] == "ok")
        let ids = entries.compactMap { $0["id"]?.intValue }
        try #require(ids.count == 6)
        #expect(ids == ids.sorted() && all.1?["nextAfter"] == .int(ids[5]))

        var after = 0, seen: [Int] = []
        while true {
            let page = try get("?limit=2&after=\(after)")
            #expect(page.0 == 200)
            let batch = try #require(page.1?["entries"]?.arrayValue).compactMap { $0["id"]?.intValue }
            seen += batch
            after = try #require(page.1?["nextAfter"]?.intValue)
            guard page.1?["more"] == true else { break }
        }
        #expect(seen == ids)
        let since = try get("?since=2027-01-15T09:02:00%2B01:00")
        #expect(since.1?["entries"]?.arrayValue?.compactMap { $0["target"]?.stringValue } == ["s2\"\n", "s3\"\n", "s4\"\n"])
        #expect(try get("?since=2027-01-15T08:03:00Z&limit=1").1?["entries"]?.arrayValue?.count == 1)

        for bad in ["?limit=0", "?limit=-1", "?limit=1001", "?limit=99999999999999999999999", "?limit=abc", "?limit=", "?after=-5",
                    "?after=1e9", "?after=9999999999999999999999", "?since=yesterday", "?since=2027-02-30T00:00:00Z", "?unknown=1",
                    "?limit=1&limit=2", "?limit=%ZZ", "?limit", "?after=" + String(repeating: "9", count: 5000), "?since=%00"] {
            let answer = try get(bad)
            #expect(answer.0 == 400 && answer.1?["error"] == "badRequest", "\(bad): \(answer)")
        }
        #expect(try get("", token: String(repeating: "x", count: 43)).0 == 401)
        // Nothing changes or deletes a row.
        for method in ["POST", "PATCH", "DELETE", "PUT"] {
            #expect(try harness.client().request(method, "/api/staff/audit", [("Authorization", "Bearer \(staff)")]).status == 404)
        }
        #expect(try harness.storage.auditEntries(after: 0, since: nil, limit: 100).count == 6)
    }
}
