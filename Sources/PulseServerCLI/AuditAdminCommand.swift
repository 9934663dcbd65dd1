import Foundation
import PulseCommandLine
import PulseCore
import PulseServerStorage
import PulseStaffAPI

/// `pulse-server admin audit list [--since TIME] [--limit N] [--json]`: the audit log, oldest first.
enum AuditAdminCommand {
    static func command(console: Console) -> Command {
        Command(
            name: "audit", abstract: "Read the audit log of staff and admin actions (append-only; nothing deletes it).",
            subcommands: [list(console)])
    }

    static let since = Option.value(
        "since", "<time>", help: "Only rows at or after this time: RFC 3339 (2026-12-01T14:00:00Z, …+01:00) or a duration ago (90s, 30m, 2h, 7d).",
        mustBe: "an RFC 3339 time like 2026-12-01T14:00:00Z, or a duration like 30m, 2h or 7d"
    ) { text in Timestamp.rfc3339Seconds(text) ?? Lifetime.seconds(text).map { TimeText.now() - $0 } }
    static let limit = Option.int("limit", "<n>", in: 1...10_000_000, help: "At most n rows (default: all).")
    /// Rows read per round trip.
    static let page = 1000

    static func list(_ console: Console) -> Command {
        Command(
            name: "list", abstract: "List the audit log, oldest first: time, actor, action, target, result, client, detail.",
            discussion: """
                Every staff API change and every admin command that changes something is one row (a session set with \
                several settings: one row each): done (ok), refused (refused:bad-input, refused:not-found, \
                refused:conflict) or failed (error). Never a secret: credentials appear by their listing id. Failed \
                authentication is not an action and is not recorded. Text fields are escaped: a quote, a backslash \
                or a control character cannot end a field or a line.
                """,
            examples: ["pulse-server admin audit list --data /var/lib/pulse --since 2h", "pulse-server admin audit list --data /var/lib/pulse --since 2026-12-01T08:00:00Z --json"],
            options: [ServerCommand.dataOption, ServerCommand.databaseOption, since, limit, ServerCommand.jsonOption],
            run: { arguments in
                let storage = try ServerCommand.storage(arguments, console)
                let wanted = arguments[limit] ?? Int.max
                var records: [AuditRecord] = []
                var after: Int64 = 0
                while records.count < wanted {
                    let ask = min(page, wanted - records.count)
                    let batch = try storage.auditEntries(after: after, since: arguments[since], limit: ask)
                    records += batch
                    guard batch.count == ask, let last = batch.last else { break }
                    after = last.id
                }
                console.list(records, asJSON: arguments[ServerCommand.jsonOption], json: StaffJSON.audit, line: line)
                return ExitCode.success
            })
    }

    /// One row: `id  time  actor  action  "target"  result  client  "detail"`; every text that is not of this
    /// program's fixed vocabulary is quoted and escaped (`DeviceText.escaped`), absent values are `-`.
    static func line(_ record: AuditRecord) -> String {
        let entry = record.entry
        func quoted(_ text: String?) -> String { text.map { "\"\(DeviceText.escaped($0))\"" } ?? "-" }
        let actor = "\(entry.actor.kind.rawValue):\(quoted(entry.actor.id))" + (entry.actor.role.map { " (\(DeviceText.escaped($0)))" } ?? "")
        return [
            String(record.id), TimeText.iso(entry.at), actor, entry.action.rawValue, quoted(entry.target), entry.result.text,
            entry.client.map { "from \(DeviceText.escaped($0))" } ?? "cli", quoted(entry.detail),
        ].joined(separator: "  ")
    }
}
