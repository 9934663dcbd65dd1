import Foundation
import PulseAge
import PulseCommandLine
import PulseServer
import PulseCore
import PulseServerStorage

/// `pulse-server import --data DIR PACKAGE [--identity FILE]… [--replace-package] [--json]`
enum ImportCommand {
    static let identity = Option.values("identity", "<file>", help: "age identity file opening sealed key tables (.json.age); may be repeated.")
    static let replacePackage = Option.flag("replace-package", help: "Accept sessions imported from another package id, dropping their old key tables.")
    static let package = Positional.one("package", help: "The package folder, or its server part.")

    static func command(console: Console) -> Command {
        Command(
            name: "import",
            abstract: "Import a package's server part: manifests, gated resources and key tables, in one transaction.",
            discussion: """
                PACKAGE is a package folder (its server/ part is read) or a copied server part itself. Everything is
                checked before anything is written; then one transaction writes it all or nothing. Importing the same
                package twice changes nothing. Refused (exit 65, nothing changes): a (session, deckVersion) the server
                holds with other keys, a session imported from another package id (unless --replace-package), a deck
                older than the one held.
                """,
            options: [
                ServerCommand.dataOption, ServerCommand.databaseOption,
                identity, replacePackage, ServerCommand.jsonOption,
            ],
            positionals: [package],
            validate: { arguments in try ServerCommand.checkStorageGiven(arguments, console) },
            run: { arguments in try run(arguments, console: console) })
    }

    static func run(_ arguments: Arguments, console: Console) throws -> Int32 {
        let package = arguments[Self.package]
        try ServerCommand.checkStorageGiven(arguments, console)
        var identities: [AgeIdentity] = []
        for path in arguments[identity] {
            let text: String
            do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
                throw InputError(file: path, "cannot read the identity file")
            }
            identities += try AgeIdentity.parseFile(text, name: path)
        }
        // Read and check the whole package before the database is even opened.
        let plan = try PackageReader(package: URL(fileURLWithPath: package), identities: identities).read()
        let administration = Administration(storage: try ServerCommand.storage(arguments, console))
        let summary = try administration.importContent(plan, options: ImportOptions(replacePackage: arguments[replacePackage]))
        if arguments[ServerCommand.jsonOption] { console.out(json: summary.json) } else { console.out(summary.line) }
        return ExitCode.success
    }
}

extension ImportSummary {
    /// One line: what changed, per session and series.
    public var line: String {
        let changedSessions = sessions.filter { $0.outcome != .unchanged }
        let changedSeries = series.filter { $0.outcome != .unchanged }
        let unchanged = sessions.count - changedSessions.count + series.count - changedSeries.count
        guard !changedSessions.isEmpty || !changedSeries.isEmpty else {
            return "package \(packageId): nothing changed (\(count(sessions.count, "session")), \(count(series.count, "series")) already current)"
        }
        var parts: [String] = []
        if !changedSessions.isEmpty {
            parts.append("sessions " + changedSessions.map { item in
                switch item.outcome {
                case let .new(deck): "\(item.id) (new, deckVersion \(deck))"
                case let .deck(from, to): "\(item.id) (deckVersion \(from) → \(to))"
                case .manifest: "\(item.id) (new manifest, same deck)"
                case .unchanged: item.id
                }
            }.joined(separator: ", "))
        }
        if !changedSeries.isEmpty {
            parts.append("series " + changedSeries.map { "\($0.id) (\($0.outcome == .new ? "new" : "updated"))" }.joined(separator: ", "))
        }
        if unchanged > 0 { parts.append("\(unchanged) unchanged") }
        return "imported package \(packageId): " + parts.joined(separator: "; ")
    }

    private func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 || noun == "series" ? "" : "s")" }

    /// `--json`: `{ packageId, changed, sessions: [{ id, outcome, deckVersion?, from?, to? }], series: [{ id, outcome }] }`.
    public var json: JSONValue {
        .object([
            "packageId": .string(packageId.hex),
            "changed": .bool(!isNoOp),
            "sessions": .array(sessions.map { item in
                switch item.outcome {
                case let .new(deck): ["id": .string(item.id), "outcome": "new", "deckVersion": .int(deck)]
                case let .deck(from, to): ["id": .string(item.id), "outcome": "deck", "from": .int(from), "to": .int(to)]
                case .manifest: ["id": .string(item.id), "outcome": "manifest"]
                case .unchanged: ["id": .string(item.id), "outcome": "unchanged"]
                }
            }),
            "series": .array(series.map { ["id": .string($0.id), "outcome": .string("\($0.outcome)")] }),
        ])
    }
}
