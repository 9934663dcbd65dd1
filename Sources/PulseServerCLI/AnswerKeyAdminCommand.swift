import Foundation
import PulseCommandLine
import PulseCore
import PulseServer
import PulseServerStorage
import PulseSystem

/// `pulse-server admin answer-key rotate [--lead S] | list`: the keys that sign sync answers (issue 21).
enum AnswerKeyAdminCommand {
    static func command(console: Console) -> Command {
        Command(
            name: "answer-key", abstract: "Rotate or list the keys that sign sync answers (Pulse-Signature).",
            subcommands: [rotate(console), list(console)])
    }

    static let lead = Option.int(
        "lead", "<seconds>", in: 0...31_536_000,
        help: "Publish the new key now, sign with it this long from now (default: --answer-ttl, so every device can learn it first).")
    static let ttl = Option.int(
        "answer-ttl", "<seconds>", in: 60...86_400, help: "serve's --answer-ttl (default 3600): how long after its last signature an old key stays published.")

    static func rotate(_ console: Console) -> Command {
        Command(
            name: "rotate", abstract: "Add an answer-signing key: published at once, signing from now + lead; the current key stops then.",
            discussion: """
                The old key stays published (GET /api/sync/answer-keys, with retiresAt) until the last answer it signed \
                has expired (its last signing moment + the answer TTL); then it is removed. A device that trusts the old key \
                learns the new one from a key set the old key signed. Prints the new key's id.
                """,
            examples: ["pulse-server admin answer-key rotate --data /var/lib/pulse", "pulse-server admin answer-key rotate --database postgresql://… --lead 7200"],
            options: [ServerCommand.dataOption, ServerCommand.databaseOption, lead, ttl, ServerCommand.jsonOption],
            run: { arguments in
                let keys = try storage(arguments, console)
                let ttl = Int64(arguments[Self.ttl] ?? 3600)
                let now = TimeText.now()
                let added = try keys.rotateAnswerKey(lead: Int64(arguments[lead] ?? Int(ttl)), ttl: ttl, at: now)
                let actor = AuditActor.cli(user: SystemUser.name(environment: ProcessInfo.processInfo.environment))
                try keys.appendAudit([AuditEntry(at: now, actor: actor, action: .answerKeyRotate, target: added.kid)])
                if arguments[ServerCommand.jsonOption] {
                    console.out(json: json(added, ttl: ttl))
                } else {
                    console.out(added.kid)
                    console.err("answer key \(added.kid) published now, signs from \(TimeText.iso(added.signsFrom))")
                }
                return ExitCode.success
            })
    }

    static func list(_ console: Console) -> Command {
        Command(
            name: "list", abstract: "List the answer-signing keys still published: kid, signs from, signs until, retires at.",
            options: [ServerCommand.dataOption, ServerCommand.databaseOption, ttl, ServerCommand.jsonOption],
            run: { arguments in
                let ttl = Int64(arguments[Self.ttl] ?? 3600)
                let now = TimeText.now()
                let keys = try storage(arguments, console).answerKeys().filter { $0.isPublished(at: now, ttl: ttl) }
                console.list(keys, asJSON: arguments[ServerCommand.jsonOption], json: { json($0, ttl: ttl) }) { key in
                    [key.kid, "signs from " + TimeText.iso(key.signsFrom), key.signsUntil.map { "until " + TimeText.iso($0) } ?? "until rotated",
                     key.retiresAt(ttl: ttl).map { "retires " + TimeText.iso($0) } ?? "-"].joined(separator: "  ")
                }
                return ExitCode.success
            })
    }

    static func json(_ key: AnswerKeyRecord, ttl: Int64) -> JSONValue {
        var fields: [String: JSONValue] = ["kid": .string(key.kid), "signsFrom": .int(Int(key.signsFrom))]
        if let until = key.signsUntil { fields["signsUntil"] = .int(Int(until)) }
        if let retires = key.retiresAt(ttl: ttl) { fields["retiresAt"] = .int(Int(retires)) }
        return .object(fields)
    }

    /// The storage the arguments name, with its answer keys prepared (made in the database; an older version's
    /// answer-key.pem in the data folder adopted).
    static func storage(_ arguments: Arguments, _ console: Console) throws -> any ServerStorage & AnswerKeyStorage {
        if let url = try ServerCommand.databaseURL(arguments, console) {
            let postgres = try PostgresStorage(url: url, connections: 2, watchChanges: false)
            _ = try postgres.prepareAnswerKeys(adopting: nil, at: TimeText.now())
            return postgres
        }
        let folder = try ServerCommand.dataFolder(arguments)
        let sqlite = try folder.openStorage(connections: 2)
        _ = try sqlite.prepareAnswerKeys(adopting: try AnswerKeyFile.existing(in: folder), at: TimeText.now())
        return sqlite
    }
}
