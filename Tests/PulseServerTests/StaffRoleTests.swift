import Foundation
import PulseTestSupport
import PulseCore
import PulseHTTPServer
import PulsePostgres
import PulsePostgresTesting
import PulseSQLite
import PulseSystem
import SyncTestSupport
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseStaffAPI

/// Staff roles (issue 18): every staff route against every kind of token. An allowed request gets its normal
/// answer; a forbidden one gets 403 `forbidden`, changes nothing in storage, and a forbidden change is audited
/// as `refused:forbidden` with the token's real role.
@Suite struct StaffRoleTests {
    /// The five tokens of the matrix: `talk` is the session the routes act on, `other` another one.
    enum Who: String, CaseIterable {
        case admin, moderator, moderatorOfOther, presenter, presenterOfOther

        var role: StaffRole {
            switch self {
            case .admin: .admin
            case .moderator, .moderatorOfOther: .moderator
            case .presenter, .presenterOfOther: .presenter
            }
        }

        var session: String? {
            switch self {
            case .admin, .moderator: nil
            case .presenter: "talk"
            case .moderatorOfOther, .presenterOfOther: "other"
            }
        }
    }

    /// Everything a forbidden request must leave as it was.
    struct Snapshot: Equatable {
        var credentials: [CredentialRecord]
        var devices: [DeviceRecord]
        var sessions: [SessionRecord]

        init(_ storage: any ServerStorage) throws {
            credentials = try storage.credentials()
            devices = try storage.devices()
            sessions = try storage.sessions()
        }
    }

    /// One route: how to call it (set up afresh for each token), and who may.
    struct Route {
        var name: String
        var allowed: Set<Who>
        var isChange: Bool
        var call: (SyncHarness) throws -> (method: String, path: String, body: JSONValue?)
    }

    static var routes: [Route] { [
        Route(name: "POST device-codes", allowed: [.admin], isChange: true) { _ in ("POST", "device-codes", ["session": "talk"]) },
        Route(name: "POST registration-tokens", allowed: [.admin], isChange: true) { _ in ("POST", "registration-tokens", ["series": "conf"]) },
        Route(name: "POST staff-tokens", allowed: [.admin], isChange: true) { _ in ("POST", "staff-tokens", ["role": "presenter", "session": "talk"]) },
        Route(name: "GET tokens", allowed: [.admin], isChange: false) { _ in ("GET", "tokens", nil) },
        Route(name: "POST tokens/revoke", allowed: [.admin], isChange: true) { harness in
            ("POST", "tokens/revoke", ["token": .string(try harness.administration.createDeviceCode(scope: .session("talk")).listingId)])
        },
        Route(name: "GET devices", allowed: [.admin, .moderator, .moderatorOfOther], isChange: false) { _ in ("GET", "devices", nil) },
        Route(name: "POST devices/{id}/revoke", allowed: [.admin], isChange: true) { harness in
            ("POST", "devices/\(try harness.device(for: .session("talk")).id)/revoke", nil)
        },
        Route(name: "GET sessions", allowed: Set(Who.allCases), isChange: false) { _ in ("GET", "sessions", nil) },
        Route(name: "GET sessions/{id}", allowed: [.admin, .moderator, .presenter], isChange: false) { _ in ("GET", "sessions/talk", nil) },
        Route(name: "PATCH sessions/{id} state live", allowed: [.admin, .presenter], isChange: true) { harness in
            _ = try harness.storage.updateSession(id: "talk", SessionUpdate(state: .rehearsal), at: harness.clock.seconds)
            return ("PATCH", "sessions/talk", ["state": "live"])
        },
        Route(name: "POST sessions/{id} state ended", allowed: [.admin, .presenter], isChange: true) { harness in
            _ = try harness.storage.updateSession(id: "talk", SessionUpdate(state: .live), at: harness.clock.seconds)
            return ("POST", "sessions/talk", ["state": "ended"])
        },
        Route(name: "POST sessions/{id} state scheduled", allowed: [.admin], isChange: true) { harness in
            _ = try harness.storage.updateSession(id: "talk", SessionUpdate(state: .live), at: harness.clock.seconds)
            return ("POST", "sessions/talk", ["state": "scheduled"])
        },
        Route(name: "POST sessions/{id} state and a rule", allowed: [.admin], isChange: true) { harness in
            _ = try harness.storage.updateSession(id: "talk", SessionUpdate(state: .rehearsal), at: harness.clock.seconds)
            return ("POST", "sessions/talk", ["state": "live", "allowDownload": true])
        },
        Route(name: "PATCH sessions/{id} maxShown", allowed: [.admin], isChange: true) { harness in
            _ = try harness.storage.updateSession(id: "talk", SessionUpdate(state: .live), at: harness.clock.seconds)
            let next = (try harness.storage.session(id: "talk")?.maxShown ?? 0) + 1
            return ("PATCH", "sessions/talk", ["maxShown": .int(next)])
        },
        Route(name: "POST sessions/{id}/advance", allowed: [.admin, .presenter], isChange: true) { harness in
            _ = try harness.storage.updateSession(id: "talk", SessionUpdate(state: .live), at: harness.clock.seconds)
            let next = (try harness.storage.session(id: "talk")?.maxShown ?? 0) + 1
            return ("POST", "sessions/talk/advance", ["maxShown": .int(next)])
        },
        Route(name: "GET sessions/{id}/live", allowed: [.admin, .moderator, .presenter], isChange: false) { _ in ("GET", "sessions/talk/live", nil) },
        Route(name: "GET sessions/{id}/report", allowed: [.admin, .moderator], isChange: false) { _ in ("GET", "sessions/talk/report", nil) },
        Route(name: "GET audit", allowed: [.admin], isChange: false) { _ in ("GET", "audit", nil) },
    ] }

    @Test func everyRouteAgainstEveryRole() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk", "other"], series: "conf", state: .live)
        var tokens: [Who: (secret: String, id: String)] = [:]
        for who in Who.allCases {
            let minted = try harness.administration.createStaffToken(role: who.role, session: who.session)
            tokens[who] = (minted.text, minted.listingId)
        }
        _ = try harness.device(for: .session("talk"))
        _ = try harness.device(for: .session("other"))
        _ = try harness.device(for: .series("conf"))

        var lastAudit = try harness.storage.auditEntries(after: 0, since: nil, limit: 10_000).last?.id ?? 0
        for route in Self.routes {
            for who in Who.allCases {
                let (method, path, body) = try route.call(harness)
                lastAudit = try harness.storage.auditEntries(after: 0, since: nil, limit: 10_000).last?.id ?? 0
                let before = try Snapshot(harness.storage)
                let token = try #require(tokens[who])
                let response = try harness.client().request(
                    method, "/api/staff/" + path, [("Authorization", "Bearer \(token.secret)")], body: body?.canonicalBytes ?? [])
                let rows = try harness.storage.auditEntries(after: lastAudit, since: nil, limit: 10_000).map(\.entry)
                let label = "\(route.name) as \(who): \(response.status) \(response.text)"
                if route.allowed.contains(who) {
                    #expect((200..<300).contains(response.status), "\(label)")
                    if route.isChange {
                        #expect(!rows.isEmpty && rows.allSatisfy { $0.result == .ok && $0.actor == .staff(tokenId: token.id, role: who.role.rawValue) }, "\(label) \(rows)")
                    }
                } else {
                    #expect(response.status == 403 && response.json?["error"] == "forbidden", "\(label)")
                    let message = response.json?["message"]?.stringValue ?? ""
                    #expect(message.contains(who.role.rawValue) && message.contains("may not"), "\(label)")
                    #expect(try Snapshot(harness.storage) == before, "\(label) changed something")
                    if route.isChange {
                        #expect(rows.count == 1 && rows.first?.result == .refused("forbidden"), "\(label) \(rows)")
                        #expect(rows.first?.actor == .staff(tokenId: token.id, role: who.role.rawValue), "\(label) \(rows)")
                    } else {
                        #expect(rows.isEmpty, "\(label) \(rows)")
                    }
                }
            }
        }
    }

    /// The lists a scoped token sees are its session's; a presenter's live view has counts, not devices.
    @Test func scopedTokensSeeOnlyTheirSession() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk", "other"], series: "conf", state: .live)
        _ = try harness.seed(["alone"], state: .live)
        let onTalk = try harness.device(for: .session("talk"))
        let onOther = try harness.device(for: .session("other"))
        let onSeries = try harness.device(for: .series("conf"))
        let onAlone = try harness.device(for: .session("alone"))
        func get(_ who: Who, _ path: String, session: String? = nil) throws -> JSONValue? {
            let token = try harness.administration.createStaffToken(role: who.role, session: session ?? who.session).text
            let response = try harness.client().request("GET", "/api/staff/" + path, [("Authorization", "Bearer \(token)")])
            #expect(response.status == 200, "\(who) \(path): \(response.status) \(response.text)")
            return response.json
        }
        func ids(_ value: JSONValue?) -> Set<String> { Set(value?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []) }
        #expect(ids(try get(.admin, "sessions")) == ["talk", "other", "alone"])
        #expect(ids(try get(.moderator, "sessions")) == ["talk", "other", "alone"])
        #expect(ids(try get(.presenter, "sessions")) == ["talk"])
        #expect(ids(try get(.moderatorOfOther, "sessions")) == ["other"])
        #expect(ids(try get(.moderator, "devices")).isSuperset(of: [onTalk.id, onOther.id, onSeries.id, onAlone.id]))
        #expect(ids(try get(.moderatorOfOther, "devices")) == [onOther.id, onSeries.id])
        #expect(ids(try get(.moderator, "devices", session: "alone")) == [onAlone.id])

        let admin = try #require(try get(.admin, "sessions/talk/live")?.objectValue)
        let presenter = try #require(try get(.presenter, "sessions/talk/live")?.objectValue)
        #expect(admin["devices"] != nil && presenter["devices"] == nil)
        #expect(presenter["deviceCount"] == admin["deviceCount"] && presenter["openStreams"] != nil && presenter["maxShown"] == admin["maxShown"])
    }

    /// The console's seam: `principal` sees a revocation on the next call, `respond(to:as:)` answers as the
    /// bearer route does (the same 403), and `may` is what the route table enforces.
    @Test func theConsoleSeamRoutesAsTheBearerRouteDoes() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk", "other"], state: .live)
        let staff = harness.sync.staff
        let minted = try harness.administration.createStaffToken(role: .presenter, session: "talk")
        let hash = try #require(CredentialSecret.hash(minted.text))
        let principal = try #require(try staff.principal(tokenHash: hash, now: harness.clock.seconds))
        #expect(principal == StaffPrincipal(tokenId: minted.listingId, role: .presenter, session: "talk"))

        let own = staff.respond(to: HTTPRequest(.get, "/api/staff/sessions/talk"), as: principal)
        #expect(own.status == 200)
        let other = staff.respond(to: HTTPRequest(.get, "/api/staff/sessions/other"), as: principal)
        #expect(other.status == 403)
        let mint = staff.respond(to: HTTPRequest(.get, "/api/staff/tokens"), as: principal)
        #expect(mint.status == 403)

        #expect(principal.may(.advance, session: "talk") && !principal.may(.advance, session: "other"))
        #expect(!principal.may(.mintDeviceCode, session: nil) && !principal.may(.readLiveDevices, session: "talk"))
        #expect(StaffPrincipal(tokenId: "x", role: .admin).may(.readAudit, session: nil))
        #expect(!StaffPrincipal(tokenId: "x", role: .moderator).may(.advance, session: "talk"))

        try harness.administration.revokeToken(minted.listingId)
        #expect(try staff.principal(tokenHash: hash, now: harness.clock.seconds) == nil)
        // Expiry, too, without any change in storage.
        let short = try harness.administration.createStaffToken(role: .moderator, lifetime: 60)
        let shortHash = try #require(CredentialSecret.hash(short.text))
        #expect(try staff.principal(tokenHash: shortHash, now: harness.clock.seconds)?.role == .moderator)
        #expect(try staff.principal(tokenHash: shortHash, now: harness.clock.seconds + 60) == nil)
    }

    /// A presenter's or moderator's changes, done or refused, each commit an audit row: they pass a bucket per
    /// token (`staffChangeLimit`, 10 a second, bursts of 60), so a low-privilege token cannot write the audit
    /// log at the rate it sends. Past it, 429 with `Retry-After`, nothing recorded; reads are not limited, nor
    /// is an admin token.
    @Test func lowPrivilegeTokensChangeAtAClickersPaceOnly() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk", "other"], state: .live)
        let presenter = try harness.administration.createStaffToken(role: .presenter, session: "talk").text
        let moderator = try harness.administration.createStaffToken(role: .moderator).text
        let admin = try harness.staffToken()
        func call(_ token: String, _ method: String, _ path: String, _ body: String = "") throws -> RawHTTPResponse {
            try harness.client().request(method, "/api/staff/" + path, [("Authorization", "Bearer \(token)")], body: Array(body.utf8))
        }
        func auditRows() throws -> Int { try harness.storage.auditEntries(after: 0, since: nil, limit: 100_000).count }

        // The presenter's clicker: 60 advances (each an audit row), then 429 until the bucket refills.
        var rows = try auditRows()
        for slide in 0..<60 { #expect(try call(presenter, "POST", "sessions/talk/advance", #"{"maxShown":\#(slide % 9)}"#).status == 200) }
        #expect(try auditRows() == rows + 60)
        let limited = try call(presenter, "POST", "sessions/talk/advance", #"{"maxShown":1}"#)
        #expect(limited.status == 429 && limited.header("retry-after") == "1" && limited.json == ["error": "rateLimited"], "\(limited.text)")
        // Refused ones too, and nothing recorded past the limit; reads go on.
        #expect(try call(presenter, "POST", "devices/x/revoke").status == 429)
        #expect(try call(presenter, "POST", "sessions/other/advance", #"{"maxShown":1}"#).status == 429)
        #expect(try auditRows() == rows + 60)
        #expect(try call(presenter, "GET", "sessions/talk").status == 200)
        harness.clock.advance(by: 1)
        for _ in 0..<10 { #expect(try call(presenter, "POST", "sessions/talk/advance", #"{"maxShown":2}"#).status == 200) }
        #expect(try call(presenter, "POST", "sessions/talk/advance", #"{"maxShown":2}"#).status == 429)

        // A moderator, whose every change is refused (403, audited): 60, then 429, unrecorded.
        rows = try auditRows()
        for _ in 0..<60 { #expect(try call(moderator, "POST", "devices/x/revoke").status == 403) }
        #expect(try call(moderator, "POST", "devices/x/revoke").status == 429)
        #expect(try call(moderator, "POST", "sessions/talk", #"{"state":"ended"}"#).status == 429)
        #expect(try auditRows() == rows + 60)
        #expect(try call(moderator, "GET", "sessions/talk/report").status == 200)

        // An admin is not limited.
        for slide in 0..<80 { #expect(try call(admin, "POST", "sessions/other/advance", #"{"maxShown":\#(slide % 9)}"#).status == 200) }
    }

    /// Minting refuses a presenter without a session, an admin with one, and a session that does not exist.
    @Test func mintingChecksRoleAndSession() throws {
        let harness = try SyncHarness()
        try harness.seed(["talk"])
        #expect(throws: ServerError.self) { try harness.administration.createStaffToken(role: .presenter) }
        #expect(throws: ServerError.self) { try harness.administration.createStaffToken(role: .admin, session: "talk") }
        #expect(throws: ServerError.self) { try harness.administration.createStaffToken(role: .moderator, session: "nope") }
        let admin = try harness.staffToken()
        func post(_ body: JSONValue) throws -> RawHTTPResponse {
            try harness.client().request("POST", "/api/staff/staff-tokens", [("Authorization", "Bearer \(admin)")], body: body.canonicalBytes)
        }
        #expect(try post(["role": "presenter"]).status == 400)
        #expect(try post(["role": "admin", "session": "talk"]).status == 400)
        #expect(try post(["role": "root"]).status == 400)
        #expect(try post(["role": "moderator", "session": "nope"]).status == 404)
        let minted = try post(["role": "presenter", "session": "talk"])
        #expect(minted.status == 201 && minted.json?["role"] == "presenter" && minted.json?["session"] == "talk")
        let listing = try harness.client().request("GET", "/api/staff/tokens", [("Authorization", "Bearer \(admin)")])
        let row = listing.json?.arrayValue?.first { $0["id"] == minted.json?["id"] }
        #expect(row?["role"] == "presenter" && row?["session"] == "talk")
        #expect(listing.json?.arrayValue?.contains { $0["id"] != minted.json?["id"] && $0["role"] == "admin" && $0["session"] == nil } == true)
    }

    @Test func anOldSQLiteStaffTokenBecomesAnAdmin() throws {
        let folder = try TestFolder()
        let path = folder.url.appendingPathComponent("server.sqlite").path
        let old = try Database(path: path)
        _ = try old.migrate(Array(SQLiteSchema.migrations.prefix(5)))
        try old.execute("INSERT INTO credentials (hash, listing_id, kind, created_at) VALUES (x'00', '000000000000', 'staff-token', 1)")
        try old.execute("INSERT INTO credentials (hash, listing_id, kind, scope_kind, scope_id, created_at) VALUES (x'01', '010000000000', 'device-code', 'session', 's', 1)")
        let storage = try SQLiteStorage(path: path)
        #expect(try old.scalarInteger("SELECT max(version) FROM schema_version") == Int64(SQLiteSchema.migrations.count))
        let records = try storage.credentials()
        #expect(records.first { $0.kind == .staffToken }?.staffRole == .admin)
        #expect(records.first { $0.kind == .deviceCode }?.staffRole == nil)
        #expect(try storage.activeStaffTokens(at: 2) == [ActiveStaffToken(hash: [0], expiresAt: nil, role: .admin, session: nil)])
    }

    @Test func anOldPostgreSQLStaffTokenBecomesAnAdmin() throws {
        let database = try PostgresCluster.shared().createDatabase("roles")
        let old = try PostgresConnection(database.configuration)
        _ = try old.migrate(Array(PostgresSchema.migrations.prefix(4)), lockKey: PostgresSchema.migrationLock)
        _ = try old.query("INSERT INTO credentials (hash, listing_id, kind, created_at) VALUES ('\\x00', '000000000000', 'staff-token', 1)")
        let storage = try PostgresStorage(configuration: database.configuration)
        #expect(storage.schemaVersions.found == 4 && storage.schemaVersions.now == PostgresSchema.migrations.count)
        #expect(try storage.credentials().first?.staffRole == .admin)
        #expect(try storage.activeStaffTokens(at: 2) == [ActiveStaffToken(hash: [0], expiresAt: nil, role: .admin, session: nil)])
        // The database itself refuses a presenter without a session.
        #expect(throws: PostgresError.self) {
            try old.query("INSERT INTO credentials (hash, listing_id, kind, created_at, staff_role) VALUES ('\\x02', '020000000000', 'staff-token', 1, 'presenter')")
        }
    }
}
