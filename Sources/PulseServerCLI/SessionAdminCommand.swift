import Foundation
import PulseCommandLine
import PulseServer
import PulseCore

/// `pulse-server admin session set|advance|list`.
extension SessionAdminCommand {
    static func command(console: Console) -> Command {
        Command(
            name: "session", abstract: "Set a session's state, frontier, download and venue rules; list sessions.",
            subcommands: [set(console), advance(console), list(console)])
    }

    static func set(_ console: Console) -> Command {
        Command(
            name: "set", abstract: "Change a session's settings (only what is given).",
            discussion: """
                --max-shown moves the live frontier with max(): it never goes back. Going back to draft or scheduled
                keeps the frontier. --venue-network locks key release to the given networks (replacing the list);
                --no-venue-networks unlocks.
                """,
            options: [
                ServerCommand.dataOption, ServerCommand.databaseOption,
                .value("state", "<state>", help: "One of \(SessionState.names)."),
                .value("max-shown", "<n>", help: "Raise the live frontier to slide n (0-based)."),
                .value("allow-download", "<true|false>", help: "Ended sessions release the whole deck when true."),
                .value("venue-network", "<cidr>", help: "A venue network, e.g. 10.20.0.0/16; may be repeated.", repeating: true),
                .flag("no-venue-networks", help: "Remove every venue network (the session is no longer venue-locked)."),
                ServerCommand.jsonOption,
            ],
            positionals: [Positional("id", help: "The session id.")],
            run: { arguments in
                var update = SessionUpdate()
                if let text = arguments.legacyValue("state") {
                    guard let state = SessionState(rawValue: text) else { throw UsageError("--state must be one of \(SessionState.names), got \"\(text)\"") }
                    update.state = state
                }
                update.maxShown = try arguments.legacyInt("max-shown", in: 0...1_000_000)
                if let text = arguments.legacyValue("allow-download") {
                    guard text == "true" || text == "false" else { throw UsageError("--allow-download must be true or false, got \"\(text)\"") }
                    update.allowDownload = text == "true"
                }
                let networks = arguments.legacyValues("venue-network")
                if arguments.legacyFlag("no-venue-networks") {
                    guard networks.isEmpty else { throw UsageError("--venue-network and --no-venue-networks exclude each other") }
                    update.venueNetworks = []
                } else if !networks.isEmpty {
                    update.venueNetworks = try networks.map { text in
                        do { return try IPNetwork(parsing: text) } catch { throw UsageError("--venue-network \(error)") }
                    }
                }
                guard !update.isEmpty else { throw UsageError("nothing to set: give --state, --max-shown, --allow-download or venue networks") }
                let record = try AdminCommand.administration(arguments, console).setSession(id: try arguments.legacyRequired("id"), update)
                show(record, arguments, console: console)
                return ExitCode.success
            })
    }

    static func advance(_ console: Console) -> Command {
        Command(
            name: "advance", abstract: "The presenter's advance: raise the frontier to slide n (live; rehearsal moves its own).",
            options: [ServerCommand.dataOption, ServerCommand.databaseOption, .value("to", "<n>", help: "The slide now shown (0-based, required)."), ServerCommand.jsonOption],
            positionals: [Positional("id", help: "The session id.")],
            run: { arguments in
                guard let slide = try arguments.legacyInt("to", in: 0...1_000_000) else { throw UsageError("missing --to <n>") }
                let (record, _) = try AdminCommand.administration(arguments, console).advance(sessionId: try arguments.legacyRequired("id"), to: slide)
                show(record, arguments, console: console)
                return ExitCode.success
            })
    }

    static func list(_ console: Console) -> Command {
        Command(
            name: "list", abstract: "List sessions with their state, frontier and deck.",
            options: [ServerCommand.dataOption, ServerCommand.databaseOption, ServerCommand.jsonOption],
            run: { arguments in
                let sessions = try ServerCommand.storage(arguments, console).sessions()
                console.list(sessions, asJSON: arguments.legacyFlag("json"), json: json, line: line)
                return ExitCode.success
            })
    }

    static func show(_ record: SessionRecord, _ arguments: Arguments, console: Console) {
        if arguments.legacyFlag("json") { console.out(json: json(record)) } else { console.out(line(record)) }
    }

    static func line(_ record: SessionRecord) -> String {
        var parts = [record.id, record.state.rawValue, "maxShown \(record.maxShown.map(String.init) ?? "none")"]
        if let rehearsal = record.rehearsalMaxShown { parts.append("rehearsal \(rehearsal)") }
        parts.append("deckVersion \(record.deckVersion) (\(record.slideCount) slides)")
        parts.append("allowDownload \(record.allowDownload)")
        parts.append(record.venueNetworks.isEmpty ? "no venue lock" : "venue " + record.venueNetworks.map(\.description).joined(separator: ","))
        return parts.joined(separator: "  ")
    }
}
