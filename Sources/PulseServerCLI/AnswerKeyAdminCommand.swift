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
        help: "Publish the new key now, sign with it this long from now (default: the keys' answer TTL, so every device can learn it first).")

    static func rotate(_ console: Console) -> Command {
        Command(
            name: "rotate", abstract: "Add an answer-signing key: published at once, signing from now + lead; the current key stops then.",
            discussion: """
                The old key stays published (GET /api/sync/answer-keys, with retiresAt) until the last answer it signed \
                has expired (its last signing moment + the answer TTL); then it is removed. The TTL is the one kept with \
                the keys in the database: each serve raises it to its --answer-ttl before it signs, so no rotation can \
                remove a key early. A device that trusts the old key learns the new one from a key set the old key \
                signed; with --lead 0 the new key signs at once, and a device that did not read the key set in between \
                must enroll again. Prints the new key's id.
                """,
            examples: ["pulse-server admin answer-key rotate --data /var/lib/pulse", "pulse-server admin answer-key rotate --database postgresql://… --lead 7200"],
            options: [ServerCommand.dataOption, ServerCommand.databaseOption, lead, ServerCommand.jsonOption],
            run: { arguments in
                let keys = try storage(arguments, console)
                let now = TimeText.now()
                let added = try keys.rotateAnswerKey(lead: arguments[lead].map(Int64.init), at: now)
                let actor = AuditActor.cli(user: SystemUser.name(environment: ProcessInfo.processInfo.environment))
                try keys.appendAudit([AuditEntry(at: now, actor: actor, action: .answerKeyRotate, target: added.kid)])
                if arguments[ServerCommand.jsonOption] {
                    console.out(json: json(added))
                } else {
                    console.out(added.kid)
                    console.err("answer key \(added.kid) published now, signs from \(TimeText.iso(added.signsFrom)) (answer TTL \(added.ttl) s)")
                }
                return ExitCode.success
            })
    }

    static func list(_ console: Console) -> Command {
        Command(
            name: "list", abstract: "List the answer-signing keys still published: kid, signs from, signs until, retires at, answer TTL.",
            options: [ServerCommand.dataOption, ServerCommand.databaseOption, ServerCommand.jsonOption],
            run: { arguments in
                let now = TimeText.now()
                let keys = try storage(arguments, console).answerKeys().filter { $0.isPublished(at: now) }
                console.list(keys, asJSON: arguments[ServerCommand.jsonOption], json: { json($0) }) { key in
                    [key.kid, "signs from " + TimeText.iso(key.signsFrom), key.signsUntil.map { "until " + TimeText.iso($0) } ?? "until rotated",
                     key.retiresAt().map { "retires " + TimeText.iso($0) } ?? "-", "ttl \(key.ttl)s"].joined(separator: "  ")
                }
                return ExitCode.success
            })
    }

    static func json(_ key: AnswerKeyRecord) -> JSONValue {
        var fields: [String: JSONValue] = ["kid": .string(key.kid), "signsFrom": .int(Int(key.signsFrom)), "ttl": .int(Int(key.ttl))]
        if let until = key.signsUntil { fields["signsUntil"] = .int(Int(until)) }
        if let retires = key.retiresAt() { fields["retiresAt"] = .int(Int(retires)) }
        return .object(fields)
    }

    /// The storage the arguments name, with its answer keys prepared (made in the database; an older version's
    /// answer-key.pem in the data folder adopted).
    static func storage(_ arguments: Arguments, _ console: Console) throws -> any ServerStorage & AnswerKeyStorage {
        if let url = try ServerCommand.databaseURL(arguments, console) {
            let postgres = try PostgresStorage(url: url, connections: 2, watchChanges: false)
            _ = try postgres.prepareAnswerKeys(adopting: nil, signingFor: nil, at: TimeText.now())
            return postgres
        }
        let folder = try ServerCommand.dataFolder(arguments)
        let sqlite = try folder.openStorage(connections: 2)
        _ = try sqlite.prepareAnswerKeys(adopting: try AnswerKeyFile.existing(in: folder), signingFor: nil, at: TimeText.now())
        return sqlite
    }
}
