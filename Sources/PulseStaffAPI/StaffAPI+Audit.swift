import Foundation
import PulseCore
import PulseHTTPServer
import PulseServerStorage
import PulseSyncAPI

extension StaffAPI {
    /// The most rows one `GET audit` answers, and how many without `limit`.
    static let auditMaxLimit = 1000
    static let auditDefaultLimit = 100

    /// `GET /api/staff/audit?after=<id>&since=<RFC 3339>&limit=<n>`: the audit log, oldest first: the rows
    /// with an id above `after` (default 0) and a time at or after `since`, at most `limit` (1 to 1000,
    /// default 100). `{"entries": […], "nextAfter": <id>, "more": bool}`: ask again with `after=nextAfter`
    /// while `more`. Anything else in the query, or a value that does not parse, is a 400. Read only: no route
    /// changes or deletes an audit row. Only the admin role may read it (StaffPermissions.swift).
    func audit(query: ArraySlice<UInt8>) throws -> HTTPResponse {
        var after: Int64 = 0
        var since: Int64?
        var limit = Self.auditDefaultLimit
        var seen: Set<String> = []
        for pair in query.split(separator: UInt8(ascii: "&")) {
            let halves = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard halves.count == 2, halves[0].count <= 16, halves[1].count <= 64,
                  let name = Self.percentDecoded(halves[0]), let value = Self.percentDecoded(halves[1])
            else { throw ServerError.badInput("the query must be after=<id>, since=<RFC 3339 time> and limit=<n>") }
            guard seen.insert(name).inserted else { throw ServerError.badInput("\(name) is given twice") }
            switch name {
            case "after":
                guard let number = BoundedDecimal.parse(value, maxDigits: 18) else { throw ServerError.badInput("after must be an audit id, 0 or more") }
                after = Int64(number)
            case "since":
                guard let seconds = Timestamp.rfc3339Seconds(value) else {
                    throw ServerError.badInput("since must be an RFC 3339 time like 2026-12-01T14:00:00Z")
                }
                since = seconds
            case "limit":
                guard let number = BoundedDecimal.parse(value, maxDigits: 4), (1...Self.auditMaxLimit).contains(number) else {
                    throw ServerError.badInput("limit must be a whole number from 1 to \(Self.auditMaxLimit)")
                }
                limit = number
            default:
                throw ServerError.badInput("unknown query parameter (after, since and limit are known)")
            }
        }
        // One more than asked tells whether there is more.
        let rows = try storage.auditEntries(after: after, since: since, limit: limit + 1)
        let page = rows.prefix(limit)
        let body: JSONValue = [
            "entries": .array(page.map(StaffJSON.audit)), "nextAfter": .int(Int(page.last?.id ?? after)), "more": .bool(rows.count > limit),
        ]
        return SyncAnswers.json(200, body, note: "staff:audit")
    }

    /// The audit action (and target) of a staff request that changes something; nil for reads and unknown routes.
    static func auditedAction(_ method: HTTPMethod, _ parts: [String]) -> (AuditAction, String?)? {
        let isWrite = method == .post || method == .other("PATCH")
        switch (parts.first ?? "", parts.count) {
        case ("device-codes", 1) where method == .post: return (.deviceCodeCreate, nil)
        case ("registration-tokens", 1) where method == .post: return (.registrationTokenCreate, nil)
        case ("staff-tokens", 1) where method == .post: return (.staffTokenCreate, nil)
        case ("tokens", 2) where parts[1] == "revoke" && method == .post: return (.tokenRevoke, nil)
        case ("devices", 3) where parts[2] == "revoke" && method == .post: return (.deviceRevoke, parts[1])
        case ("sessions", 2) where isWrite: return (.sessionSet, parts[1])
        case ("sessions", 3) where parts[2] == "advance" && method == .post: return (.sessionAdvance, parts[1])
        default: return nil
        }
    }

    /// `%XX` decoded (and `+` as a space); nil for a bad escape or text that is not UTF-8.
    static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> String? { FormDecoding.value(bytes) }
}
