import Foundation
import PulseCore
import PulseServerStorage
import PulseSystem
import Testing
@testable import PulseServerCLI

/// `pulse-server admin …` and `import` each append one audit row (one per setting for `session set`), as the
/// operating-system user, with no client address and never a secret; `admin audit list` reads them back.
@Suite struct AuditCommandTests {
    static let user = SystemUser.name(environment: ProcessInfo.processInfo.environment)

    /// Runs `arguments` (with `--data data`) and returns the exit code and the rows it appended.
    static func appended(_ data: String, _ arguments: [String]) throws -> (CLI.Result, [AuditEntry]) {
        let storage = try AdminCommandTests.storage(data)
        let before = try storage.auditEntries(after: 0, since: nil, limit: 100_000).last?.id ?? 0
        let result = CLI.run(arguments + ["--data", data])
        return (result, try storage.auditEntries(after: before, since: nil, limit: 100_000).map(\.entry))
    }

    /// Expects exactly one row of `action` on `target` with `result`, by the CLI's actor.
    static func expectOne(
        _ rows: [AuditEntry], _ action: AuditAction, target: String?, result: AuditResult = .ok, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(rows.count == 1, "\(rows)", sourceLocation: sourceLocation)
        guard let row = rows.first else { return }
        #expect(row.action == action && row.target == target && row.result == result, "\(row)", sourceLocation: sourceLocation)
        #expect(row.actor == .cli(user: user) && row.client == nil, "\(row)", sourceLocation: sourceLocation)
    }

    @Test func everyCommandThatChangesSomethingAppendsOneRow() throws {
        let (package, data) = try AdminCommandTests.seeded()
        defer { withExtendedLifetime(package) {} }
        let storage = try AdminCommandTests.storage(data)
        // The seeding import.
        let seeded = try storage.auditEntries(after: 0, since: nil, limit: 10).map(\.entry)
        Self.expectOne(seeded, .import, target: try #require(try storage.sessions().first?.packageId.hex))
        #expect(seeded.first?.detail == "sessions lab,talk; series conf" || seeded.first?.detail == "sessions talk,lab; series conf")

        var (result, rows) = try Self.appended(data, ["admin", "device-code", "create", "--session", "talk"])
        let code = try #require(result.out.first)
        let codeId = CredentialSecret.listingId(hash: try #require(CredentialSecret.hash(code)))
        Self.expectOne(rows, .deviceCodeCreate, target: codeId)
        #expect(rows.first?.detail?.hasPrefix("for session talk, expires ") == true)
        (result, rows) = try Self.appended(data, ["admin", "device-code", "create", "--session", "nope"])
        #expect(result.code == 65)
        Self.expectOne(rows, .deviceCodeCreate, target: nil, result: .refused("not-found"))
        (result, rows) = try Self.appended(data, ["admin", "registration-token", "create", "--series", "conf", "--max-devices", "5"])
        let token = try #require(result.out.first)
        let tokenId = CredentialSecret.listingId(hash: try #require(CredentialSecret.hash(token)))
        Self.expectOne(rows, .registrationTokenCreate, target: tokenId)
        #expect(rows.first?.detail?.hasPrefix("for series conf, up to 5 devices, no expiry") == true)
        (result, rows) = try Self.appended(data, ["admin", "staff-token", "create", "--json"])
        let staff = try #require(try JSONValue.parse(Data(result.out.joined(separator: "\n").utf8))["secret"]?.stringValue)
        let staffId = CredentialSecret.listingId(hash: try #require(CredentialSecret.hash(staff)))
        Self.expectOne(rows, .staffTokenCreate, target: staffId)

        // Revocations: by text and by id, staff tokens apart; again is refused; the text is never recorded.
        (result, rows) = try Self.appended(data, ["admin", "token", "revoke", code])
        Self.expectOne(rows, .tokenRevoke, target: codeId)
        (result, rows) = try Self.appended(data, ["admin", "token", "revoke", "--with-devices", tokenId])
        Self.expectOne(rows, .tokenRevoke, target: tokenId)
        #expect(rows.first?.detail == "with its devices")
        (result, rows) = try Self.appended(data, ["admin", "token", "revoke", "--token", staff])
        Self.expectOne(rows, .staffTokenRevoke, target: staffId)
        (result, rows) = try Self.appended(data, ["admin", "token", "revoke", "--token", staff])
        #expect(result.code == 65)
        Self.expectOne(rows, .staffTokenRevoke, target: staffId, result: .refused("not-found"))

        // Devices.
        let fresh = try CredentialSecret.newDeviceCode()
        try storage.addCredential(NewCredential(
            hash: CredentialSecret.hash(fresh)!, kind: .deviceCode, scope: .session("talk"), createdAt: TimeText.now()))
        let device = try #require(try storage.enroll(
            credentialHash: CredentialSecret.hash(fresh)!, device: NewDevice(id: try DeviceID.generate(), publicKey: [2], platform: "ios", name: "y"),
            at: TimeText.now()))
        (result, rows) = try Self.appended(data, ["admin", "device", "revoke", device.id])
        Self.expectOne(rows, .deviceRevoke, target: device.id)
        (result, rows) = try Self.appended(data, ["admin", "device", "revoke", device.id])
        Self.expectOne(rows, .deviceRevoke, target: device.id, result: .refused("not-found"))

        // Sessions: each setting its own row; advance; a refused advance.
        (result, rows) = try Self.appended(data, ["admin", "session", "advance", "talk", "--to", "2"])
        #expect(result.code == 65)
        Self.expectOne(rows, .sessionAdvance, target: "talk", result: .refused("conflict"))
        for (arguments, action, detail) in [
            (["--state", "live"], AuditAction.sessionState, "live"), (["--max-shown", "1"], .sessionFrontier, "maxShown 1"),
            (["--allow-download", "true"], .sessionDownloadRule, "allowDownload true"),
            (["--venue-network", "10.20.0.0/16"], .sessionVenueRule, "10.20.0.0/16"), (["--no-venue-networks"], .sessionVenueRule, "no venue networks"),
        ] {
            (result, rows) = try Self.appended(data, ["admin", "session", "set", "talk"] + arguments)
            #expect(result.code == 0, "\(result.text)")
            Self.expectOne(rows, action, target: "talk")
            #expect(rows.first?.detail == detail)
        }
        (result, rows) = try Self.appended(data, ["admin", "session", "set", "talk", "--state", "ended", "--allow-download", "false"])
        #expect(rows.map(\.action) == [.sessionState, .sessionDownloadRule] && rows.allSatisfy { $0.result == .ok })
        (result, rows) = try Self.appended(data, ["admin", "session", "set", "nope", "--state", "live"])
        Self.expectOne(rows, .sessionState, target: "nope", result: .refused("not-found"))
        _ = try Self.appended(data, ["admin", "session", "set", "lab", "--state", "live"])
        (result, rows) = try Self.appended(data, ["admin", "session", "advance", "lab", "--to", "3"])
        Self.expectOne(rows, .sessionAdvance, target: "lab")
        #expect(rows.first?.detail == "to 3")

        // Reads and usage errors append nothing.
        for arguments in [["admin", "token", "list"], ["admin", "device", "list"], ["admin", "session", "list"], ["admin", "audit", "list"],
                          ["admin", "session", "set", "talk"]] {
            #expect(try Self.appended(data, arguments).1.isEmpty, "\(arguments)")
        }
        // The import again: one row, ok (nothing changed is still an import that was done).
        (result, rows) = try Self.appended(data, ["import", package.root.path])
        Self.expectOne(rows, .import, target: try storage.sessions().first?.packageId.hex)

        let all = try storage.auditEntries(after: 0, since: nil, limit: 1000).map { "\($0)" }.joined()
        for secret in [code, token, staff] { #expect(!all.contains(secret)) }
    }

    @Test func theListingEscapesEveryFieldAndReadsJSONAndSince() throws {
        let (package, data) = try AdminCommandTests.seeded()
        defer { withExtendedLifetime(package) {} }
        // A hostile id typed (or sent) as a device id: refused, recorded, and shown escaped.
        let hostile = "x\"  ok  from 10.0.0.1\n12  2026-01-01T00:00:00Z  cli:\"root\"\u{202E}"
        #expect(CLI.run(["admin", "device", "revoke", "--data", data, "--", hostile]).code == 65)
        let list = CLI.run(["admin", "audit", "list", "--data", data])
        #expect(list.code == 0 && list.out.count == 2, "\(list.text)")
        let line = try #require(list.out.last)
        #expect(line.contains(#""x\"  ok  from 10.0.0.1\u{A}12  2026-01-01T00:00:00Z  cli:\"root\"\u{202E}""#), "\(line)")
        #expect(line.contains("  device.revoke  ") && line.contains("  refused:not-found  cli  -"))
        #expect(line.contains("cli:\"\(DeviceText.escaped(Self.user))\""))

        let json = CLI.run(["admin", "audit", "list", "--data", data, "--json"])
        let rows = try #require(try JSONValue.parse(Data(json.out.joined(separator: "\n").utf8)).arrayValue)
        try #require(rows.count == 2)
        #expect(rows[1]["target"]?.stringValue == hostile && rows[1]["result"] == "refused:not-found")
        #expect(rows[1]["actor"] == ["kind": "cli", "id": .string(Self.user), "role": .null] && rows[1]["client"] == .null)
        #expect(rows[0]["action"] == "import" && rows[0]["id"] == 1 && rows[1]["id"] == 2)

        #expect(CLI.run(["admin", "audit", "list", "--data", data, "--limit", "1"]).out.count == 1)
        #expect(CLI.run(["admin", "audit", "list", "--data", data, "--since", "2h"]).out.count == 2)
        #expect(CLI.run(["admin", "audit", "list", "--data", data, "--since", "2999-01-01T00:00:00+02:00"]).out.isEmpty)
        #expect(CLI.run(["admin", "audit", "list", "--data", data, "--since", "2000-01-01T00:00:00Z"]).out.count == 2)
        for bad in ["yesterday", "2026-02-30T00:00:00Z", "99999999999999999999d"] {
            let refused = CLI.run(["admin", "audit", "list", "--data", data, "--since", bad])
            // One error line (then the usage hint every usage error has).
            #expect(refused.code == 64 && refused.err.first?.hasPrefix("pulse-server: error: admin audit list: --since must be an RFC 3339 time") == true,
                    "\(refused.err)")
        }
        #expect(CLI.run(["admin", "audit", "list", "--data", data, "--limit", "0"]).code == 64)
    }
}
