import Foundation
import PulseCore
import PulseCrypto
import PulseServer
import PulseServerStorage
@testable import PulseServerCLI
import PulseCommandLine
import PulseTestSupport
import Testing

@Suite struct AdminCommandTests {
    /// A data folder with the sessions "talk" and "lab" in series "conf".
    static func seeded(_ name: String = #function) throws -> (TestPackage, String) {
        let package = try TestPackage(packageId: TestContent.packageAID, name)
        try package.addSession("talk", series: "conf")
        try package.addSession("lab", series: "conf")
        try package.addSeries("conf", sessions: ["talk", "lab"])
        try package.commit()
        let data = package.root.appendingPathComponent("data").path
        let result = CLI.run(["import", "--data", data, package.root.path])
        precondition(result.code == 0, result.text)
        return (package, data)
    }

    static func storage(_ data: String) throws -> SQLiteStorage { try SQLiteStorage(path: data + "/pulse-server.sqlite") }

    @Test func deviceCodesArePrintedOnceAndStoredHashed() throws {
        let (package, data) = try Self.seeded()
        defer { withExtendedLifetime(package) {} }
        let result = CLI.run(["admin", "device-code", "create", "--data", data, "--session", "talk", "--expires", "2h"])
        #expect(result.code == 0, "\(result.text)")
        let code = try #require(result.out.first)
        #expect(result.out.count == 1 && CredentialSecret.normalizedDeviceCode(code) != nil)
        #expect(result.err.first?.hasPrefix("device-code \(CredentialSecret.listingId(hash: CredentialSecret.hash(code)!)) for session talk, expires ") == true)
        // Only the hash is in the database file.
        let database = try Data(contentsOf: URL(fileURLWithPath: data + "/pulse-server.sqlite"))
        #expect(database.range(of: Data(code.utf8)) == nil)
        #expect(database.range(of: Data(CredentialSecret.hash(code)!)) != nil)

        let storage = try Self.storage(data)
        let record = try #require(try storage.credentials().first)
        #expect(record.kind == .deviceCode && record.scope == .session("talk"))
        #expect(record.expiresAt.map { $0 - record.createdAt } == 7200)
        let device = NewDevice(id: try DeviceID.generate(), publicKey: [1], platform: "ios", name: "x")
        #expect(try storage.enroll(credentialHash: CredentialSecret.hash(code.lowercased())!, device: device, at: record.createdAt + 10) != nil)
    }

    @Test func codesAndTokensNeedAnImportedScope() throws {
        let (package, data) = try Self.seeded()
        defer { withExtendedLifetime(package) {} }
        let session = CLI.run(["admin", "device-code", "create", "--data", data, "--session", "nope"])
        #expect(session.code == 65 && session.err == ["pulse-server: error: no session nope (import its package first)"])
        let series = CLI.run(["admin", "registration-token", "create", "--data", data, "--series", "nope"])
        #expect(series.code == 65 && series.err == ["pulse-server: error: no series nope (import its package first)"])
        let both = CLI.run(["admin", "device-code", "create", "--data", data, "--session", "talk", "--series", "conf"])
        #expect(both.code == 64 && both.err.first == "pulse-server: error: admin device-code create: give exactly one of --series <id> or --session <id>")
        let expiry = CLI.run(["admin", "device-code", "create", "--data", data, "--session", "talk", "--expires", "2 hours"])
        #expect(expiry.code == 64)
    }

    @Test func registrationTokensAndStaffTokensAndRevocation() throws {
        let (package, data) = try Self.seeded()
        defer { withExtendedLifetime(package) {} }
        let minted = CLI.run(["admin", "registration-token", "create", "--data", data, "--series", "conf", "--max-devices", "3", "--json"])
        #expect(minted.code == 0, "\(minted.text)")
        let json = try JSONValue.parse(Data(minted.out.joined(separator: "\n").utf8))
        let token = try #require(json["secret"]?.stringValue)
        #expect(CredentialSecret.isTokenShaped(token) && json["maxDevices"] == 3 && json["scope"] == ["kind": "series", "id": "conf"])

        let staff = CLI.run(["admin", "staff-token", "create", "--data", data])
        let bearer = try #require(staff.out.first)
        let storage = try Self.storage(data)
        #expect(try storage.isStaffToken(hash: CredentialSecret.hash(bearer)!, at: now()))

        let list = CLI.run(["admin", "token", "list", "--data", data])
        #expect(list.out.count == 2 && !list.text.contains(token) && !list.text.contains(bearer))
        #expect(CLI.run(["admin", "token", "revoke", "--data", data, "--token", bearer]).code == 0)
        #expect(try !storage.isStaffToken(hash: CredentialSecret.hash(bearer)!, at: now()))
        let again = CLI.run(["admin", "token", "revoke", "--data", data, "--token", bearer])
        #expect(again.code == 65 && again.err == ["pulse-server: error: no such token, or it was already revoked"])
        let listingId = CredentialSecret.listingId(hash: CredentialSecret.hash(token)!)
        #expect(CLI.run(["admin", "token", "revoke", "--data", data, listingId]).code == 0)
        #expect(try storage.credentials().allSatisfy { $0.revokedAt != nil })
    }

    @Test func devicesAreListedAndRevoked() throws {
        let (package, data) = try Self.seeded()
        defer { withExtendedLifetime(package) {} }
        let storage = try Self.storage(data)
        let code = try #require(CLI.run(["admin", "device-code", "create", "--data", data, "--series", "conf"]).out.first)
        let id = try DeviceID.generate()
        _ = try storage.enroll(
            credentialHash: CredentialSecret.hash(code)!, device: NewDevice(id: id, publicKey: [4, 5], platform: "android", name: "Ada's Pixel"),
            at: now())
        let list = CLI.run(["admin", "device", "list", "--data", data, "--json"])
        let devices = try JSONValue.parse(Data(list.out.joined(separator: "\n").utf8))
        #expect(devices.arrayValue?.count == 1 && devices.arrayValue?[0]["name"] == "Ada's Pixel" && devices.arrayValue?[0]["status"] == "active")
        #expect(CLI.run(["admin", "device", "revoke", "--data", data, id]).code == 0)
        #expect(CLI.run(["admin", "device", "list", "--data", data]).out.first?.contains("  revoked  ") == true)
        #expect(CLI.run(["admin", "device", "revoke", "--data", data, id]).code == 65)
    }

    /// Issue 17, item 7: a token that begins with '-' (1 in 64 do) is revoked after `--` or with `--token`;
    /// without either it is refused without being echoed whole. Item 5: `--with-devices` cuts the devices it
    /// enrolled; the listing shows each token's enrollments of the last minute and its own limits.
    @Test func aTokenBeginningWithADashIsRevokedAndWithDevicesCutsItsDevices() throws {
        let (package, data) = try Self.seeded()
        defer { withExtendedLifetime(package) {} }
        let storage = try Self.storage(data)
        // Tokens that begin with '-': mint until three do (each try is 1 in 64).
        var dashed: [String] = []
        while dashed.count < 3 {
            let minted = CLI.run(["admin", "registration-token", "create", "--data", data, "--series", "conf", "--enroll-rate", "3", "--enroll-burst", "30", "--max-streams", "40"])
            if let token = minted.out.first, token.hasPrefix("-") { dashed.append(token) } else if let token = minted.out.first {
                #expect(CLI.run(["admin", "token", "revoke", "--data", data, token]).code == 0)
            }
        }
        let bare = CLI.run(["admin", "token", "revoke", "--data", data, dashed[0]])
        #expect(bare.code == 64 && !bare.text.contains(dashed[0]) && bare.err.first?.contains("goes after '--'") == true, "\(bare.err)")
        #expect(CLI.run(["admin", "token", "revoke", "--data", data, "--", dashed[0]]).code == 0)
        #expect(CLI.run(["admin", "token", "revoke", "--data", data, "--token", dashed[1]]).code == 0)
        #expect(CLI.run(["admin", "token", "revoke", "--data", data, "--token=\(dashed[2])"]).code == 0)
        #expect(CLI.run(["admin", "token", "revoke", "--data", data]).code == 64)
        #expect(CLI.run(["admin", "token", "revoke", "--data", data, "--token", dashed[0], "--", dashed[0]]).code == 64)

        // A link with devices: the listing shows them as enrolled in the last minute, and its limits.
        let link = try #require(CLI.run(["admin", "registration-token", "create", "--data", data, "--series", "conf", "--max-streams", "5"]).out.first)
        var ids: [String] = []
        for n in 0..<3 {
            ids.append(try #require(try storage.enroll(
                credentialHash: CredentialSecret.hash(link)!, device: NewDevice(id: try DeviceID.generate(), publicKey: [UInt8(n)], platform: "ios", name: "P\(n)"),
                at: now())).id)
        }
        let linkId = CredentialSecret.listingId(hash: CredentialSecret.hash(link)!)
        let line = try #require(CLI.run(["admin", "token", "list", "--data", data]).out.first { $0.hasPrefix(linkId) })
        #expect(line.contains("devices 3 (3 in the last minute)") && line.contains("streams ≤ 5"), "\(line)")
        let dashedLine = try #require(CLI.run(["admin", "token", "list", "--data", data]).out.first { $0.hasPrefix(CredentialSecret.listingId(hash: CredentialSecret.hash(dashed[0])!)) })
        #expect(dashedLine.contains("enroll 3/s burst 30, streams ≤ 40") && dashedLine.contains("revoked"), "\(dashedLine)")
        let json = try JSONValue.parse(Data(CLI.run(["admin", "token", "list", "--data", data, "--json"]).out.joined(separator: "\n").utf8))
        let row = try #require(json.arrayValue?.first { $0["id"]?.stringValue == linkId })
        #expect(row["enrolledLastMinute"] == 3 && row["maxStreams"] == 5 && row["enrollRate"] == nil)

        let cut = CLI.run(["admin", "token", "revoke", "--data", data, "--with-devices", linkId])
        #expect(cut.code == 0 && cut.err == ["revoked; 3 devices it enrolled revoked"], "\(cut.err)")
        for id in ids { #expect(try storage.device(id: id)?.isRevoked == true) }
        #expect(CLI.run(["admin", "token", "revoke", "--data", data, "--with-devices", linkId]).code == 65)
    }

    /// Issue 17, item 4: a name with quotes and spaces cannot read as another (revoked) device in the listing,
    /// and a name stored before enrollment refused bidirectional controls shows them escaped.
    @Test func deviceNamesCannotFakeListingColumns() throws {
        let (package, data) = try Self.seeded()
        defer { withExtendedLifetime(package) {} }
        let storage = try Self.storage(data)
        let fake = #"Pixel"  series:conf  revoked  enrolled 2026-01-01T00:00:00Z  via 0123456789ab"#
        let names = [fake, "Ada\u{202E}enohp\u{2066}", #"back\slash"#]
        for name in names {
            let code = try #require(CLI.run(["admin", "device-code", "create", "--data", data, "--series", "conf"]).out.first)
            _ = try storage.enroll(
                credentialHash: CredentialSecret.hash(code)!, device: NewDevice(id: try DeviceID.generate(), publicKey: [4, 5], platform: "android", name: name),
                at: now())
        }
        let lines = CLI.run(["admin", "device", "list", "--data", data]).out
        #expect(lines.count == 3)
        for line in lines {
            // The name is one quoted column: the quote that ends it is the first one not escaped by a backslash.
            let columns = Self.listingColumns(line)
            #expect(columns.count == 7 && columns[4] == "active", "\(line)")
            #expect(!line.unicodeScalars.contains { $0.properties.isBidiControl }, "\(line)")
        }
        #expect(lines.contains { $0.contains(#""Pixel\"  series:conf  revoked  enrolled 2026-01-01T00:00:00Z  via 0123456789ab""#) })
        #expect(lines.contains { $0.contains(#""Ada\u{202E}enohp\u{2066}""#) })
        #expect(lines.contains { $0.contains(#""back\\slash""#) })
    }

    /// Splits a listing line on its two-space separators, keeping a quoted column (with `\"` and `\\` escapes) whole.
    static func listingColumns(_ line: String) -> [String] {
        var columns: [String] = [], current = "", quoted = false, escaped = false
        var characters = Array(line)[...]
        while let character = characters.popFirst() {
            if quoted {
                current.append(character)
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { quoted = false }
            } else if character == "\"" {
                quoted = true
                current.append(character)
            } else if character == " ", characters.first == " " {
                characters = characters.drop { $0 == " " }
                columns.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        columns.append(current)
        return columns
    }

    @Test func sessionSetMovesStateAndFrontierOnlyForward() throws {
        let (package, data) = try Self.seeded()
        defer { withExtendedLifetime(package) {} }
        let set = CLI.run([
            "admin", "session", "set", "talk", "--data", data, "--state", "live", "--max-shown", "3", "--allow-download", "true",
            "--venue-network", "10.20.0.0/16", "--venue-network", "2001:db8::/32", "--json",
        ])
        #expect(set.code == 0, "\(set.text)")
        let record = try JSONValue.parse(Data(set.out.joined(separator: "\n").utf8))
        #expect(record["state"] == "live" && record["maxShown"] == 3 && record["allowDownload"] == true)
        #expect(record["venueNetworks"] == ["10.20.0.0/16", "2001:db8::/32"])
        #expect(CLI.run(["admin", "session", "set", "talk", "--data", data, "--max-shown", "1"]).out.first?.contains("maxShown 3") == true)
        #expect(CLI.run(["admin", "session", "advance", "talk", "--data", data, "--to", "4"]).out.first?.contains("maxShown 4") == true)
        #expect(CLI.run(["admin", "session", "set", "talk", "--data", data, "--no-venue-networks"]).out.first?.contains("no venue lock") == true)

        let draft = CLI.run(["admin", "session", "advance", "lab", "--data", data, "--to", "1"])
        #expect(draft.code == 65 && draft.err == ["pulse-server: error: session lab is draft: advances apply in rehearsal and live only"])
        let bad = [
            ["--state", "paused"], ["--allow-download", "yes"], ["--venue-network", "10.1.2.3/8"], ["--max-shown", "-1"], [],
        ].map { CLI.run(["admin", "session", "set", "talk", "--data", data] + $0) }
        #expect(bad.allSatisfy { $0.code == 64 }, "\(bad.map(\.text))")
        #expect(bad[2].err.first == "pulse-server: error: admin session set: --venue-network \"10.1.2.3/8\" has host bits set; the network is 10.0.0.0/8")
        #expect(CLI.run(["admin", "session", "set", "nope", "--data", data, "--state", "live"]).code == 65)
        #expect(CLI.run(["admin", "session", "list", "--data", data]).out.count == 2)
    }

    /// `staff-token create --role/--session`: a refused combination is one clear line and exit 64 (usage), a
    /// session that does not exist exit 65; the listing shows each token's role and session, as text and JSON.
    @Test func staffTokenRolesAndTheirRefusals() throws {
        let (package, data) = try Self.seeded()
        defer { withExtendedLifetime(package) {} }
        let refusals: [([String], Int32, String)] = [
            (["--role", "presenter"], 64, "pulse-server: error: admin staff-token create: a presenter token needs a session"),
            (["--session", "talk"], 64,
             "pulse-server: error: admin staff-token create: an admin token takes no session (give a moderator or presenter role to scope it)"),
            (["--role", "root"], 64, "pulse-server: error: admin staff-token create: --role must be one of admin, moderator, presenter, got \"root\""),
            (["--role", "moderator", "--session", "nope"], 65, "pulse-server: error: no session nope (import its package first)"),
        ]
        for (arguments, code, line) in refusals {
            let result = CLI.run(["admin", "staff-token", "create", "--data", data] + arguments)
            // A usage error (64) is followed by the CLI's "See '… --help'" hint.
            let lines = result.err.filter { !$0.hasPrefix("See '") }
            #expect(result.code == code && lines == [line] && result.out.isEmpty, "\(arguments): \(result.code) \(result.text)")
        }
        let presenter = CLI.run(["admin", "staff-token", "create", "--data", data, "--role", "presenter", "--session", "talk", "--json"])
        #expect(presenter.code == 0, "\(presenter.text)")
        let json = try JSONValue.parse(Data(presenter.out.joined(separator: "\n").utf8))
        #expect(json["role"] == "presenter" && json["session"] == "talk")
        let admin = CLI.run(["admin", "staff-token", "create", "--data", data])
        #expect(admin.code == 0 && admin.out.count == 1)
        let id = try #require(json["id"]?.stringValue)
        let list = CLI.run(["admin", "token", "list", "--data", data])
        #expect(list.out.contains { $0.hasPrefix(id + "  staff-token  presenter session talk  active") }, "\(list.text)")
        #expect(list.out.contains { $0.contains("  staff-token  admin  active") }, "\(list.text)")
        let listed = try JSONValue.parse(Data(CLI.run(["admin", "token", "list", "--data", data, "--json"]).out.joined(separator: "\n").utf8))
        let rows = listed.arrayValue ?? []
        #expect(rows.contains { $0["id"] == .string(id) && $0["role"] == "presenter" && $0["session"] == "talk" })
        #expect(rows.filter { $0["kind"] == "staff-token" }.count == 2 && rows.contains { $0["role"] == "admin" && $0["session"] == nil })
    }

    /// A presenter's token comes with its presenter link (the token alone stays on standard output): the path,
    /// or the whole URL with --public-url; other roles get none.
    @Test func aPresenterTokenPrintsItsPresenterLink() throws {
        let (package, data) = try Self.seeded()
        defer { withExtendedLifetime(package) {} }
        let path = CLI.run(["admin", "staff-token", "create", "--data", data, "--role", "presenter", "--session", "talk"])
        let token = try #require(path.out.first)
        #expect(path.code == 0 && path.out.count == 1)
        #expect(path.err.contains("presenter link (shown once): /console/present#" + token), "\(path.text)")
        let whole = CLI.run([
            "admin", "staff-token", "create", "--data", data, "--role", "presenter", "--session", "talk", "--public-url", "https://sync.example.org/pulse",
        ])
        let second = try #require(whole.out.first)
        #expect(whole.err.contains("presenter link (shown once): https://sync.example.org/pulse/console/present#" + second), "\(whole.text)")
        let moderator = CLI.run(["admin", "staff-token", "create", "--data", data, "--role", "moderator", "--public-url", "https://sync.example.org"])
        #expect(moderator.code == 0 && !moderator.text.contains("presenter link"))
        let bad = CLI.run(["admin", "staff-token", "create", "--data", data, "--role", "presenter", "--session", "talk", "--public-url", "pulse://x"])
        #expect(bad.code == 64 && bad.out.isEmpty)
    }

    @Test func everyCommandHasHelp() {
        for path in [
            ["import"], ["admin"], ["admin", "device-code", "create"], ["admin", "registration-token", "create"], ["admin", "staff-token", "create"],
            ["admin", "token", "revoke"], ["admin", "token", "list"], ["admin", "device", "list"], ["admin", "device", "revoke"],
            ["admin", "session", "set"], ["admin", "session", "advance"], ["admin", "session", "list"],
        ] {
            let result = CLI.run(path + ["--help"])
            #expect(result.code == 0 && result.out.first?.hasPrefix("OVERVIEW: ") == true, "\(path)")
        }
    }
}

func now() -> Int64 { Int64(Date().timeIntervalSince1970) }
