import Foundation
import PulseCommandLine
import PulseServer
import PulseCore
import PulsePostgres
import PulseServerStorage

/// `pulse-server migrate --from sqlite:DIR --to postgresql://… [--replace] [--json]`
enum MigrateCommand {
    static let from = Option.value("from", "<sqlite:dir>", help: "The data folder of the SQLite server, as sqlite:DIR.")
        .required("missing --from sqlite:<dir>")
    static let to = Option.value("to", "<url>", help: "The PostgreSQL database, postgresql://…. Default: $\(ServerCommand.databaseVariable).")
    static let replace = Option.flag("replace", help: "Empty the target's pulse-server tables first (everything in them is lost).")

    static func command(console: Console) -> Command {
        Command(
            name: "migrate",
            abstract: "Move a single-box event from its SQLite data folder into PostgreSQL, in one transaction, and check the counts.",
            discussion: """
                Stop the SQLite server first: what it writes after the copy starts stays behind. Everything moves: credentials,
                devices, sessions with their states and frontiers, manifests, gated resources, key tables, series, change logs,
                diagnostic samples, the audit log, replay keys that have not expired, and DIR's device certificate key (devices hold
                certificates signed with it; every instance signs with it from then on). The SQLite file is only read. The
                target database must hold no pulse-server data (its schema is created when missing) unless --replace, which
                empties it in the same transaction. Run it before the instances start on the target.
                """,
            options: [
                from, to, replace, ServerCommand.jsonOption,
            ],
            validate: { arguments in _ = try endpoints(arguments, console) },
            run: { arguments in try run(arguments, console: console) })
    }

    /// The SQLite data folder and the PostgreSQL target, checked before anything is read.
    static func endpoints(_ arguments: Arguments, _ console: Console) throws -> (folder: URL, target: PostgresConfiguration) {
        let from = arguments[Self.from]
        guard from.hasPrefix("sqlite:"), from.count > "sqlite:".count else {
            throw UsageError("--from must be sqlite:<dir>, the data folder of the SQLite server, got \"\(from)\"")
        }
        let folder = URL(fileURLWithPath: String(from.dropFirst("sqlite:".count))).standardizedFileURL
        let url = arguments[Self.to] ?? console.environment[ServerCommand.databaseVariable].flatMap { $0.isEmpty ? nil : $0 }
        guard let url else { throw UsageError("missing --to postgresql://… (or \(ServerCommand.databaseVariable))") }
        guard url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") else {
            throw UsageError("--to must be a postgresql:// URL (postgresql://user:password@host:port/database)")
        }
        do { return (folder, try PostgresConfiguration(url)) } catch {
            throw UsageError("--to is not a URL libpq reads: \(error.message)")
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws -> Int32 {
        let (folder, target) = try endpoints(arguments, console)
        let migrator = PostgresMigrator(
            source: folder.appendingPathComponent(DataFolder.databaseName).path,
            certificateKeyPath: folder.appendingPathComponent(DataFolder.certificateKeyName).path, target: target,
            replace: arguments[replace], now: TimeText.now())
        let counts = try migrator.run()
        if arguments[ServerCommand.jsonOption] {
            let json = JSONValue.object([
                "from": .string(folder.path), "to": .string(target.redacted),
                "tables": .array(counts.map { ["table": .string($0.table), "rows": .int($0.rows), "leftBehind": .int($0.leftBehind)] }),
            ])
            console.out(json: json)
        } else {
            let tables = counts.map { count in
                "\(count.table) \(count.rows)" + (count.leftBehind > 0 ? " (\(count.leftBehind) expired left behind)" : "")
            }
            console.out("moved sqlite:\(folder.path) to \(target.redacted): " + tables.joined(separator: ", ") + "; every count checked")
        }
        return ExitCode.success
    }
}
