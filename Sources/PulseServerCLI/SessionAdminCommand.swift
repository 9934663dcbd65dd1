import Foundation
import PulseCommandLine
import PulseServer
import PulseServerStorage
import PulseStaffAPI
import PulseCore

/// `pulse-server admin session set|advance|list`.
enum SessionAdminCommand {
    static func command(console: Console) -> Command {
        Command(
            name: "session", abstract: "Set a session's state, frontier, download and venue rules; list sessions.",
            subcommands: [set(console), advance(console), list(console)])
    }

    static let state = Option.value(
        "state", "<state>", help: "One of \(SessionState.names).", mustBe: "one of \(SessionState.names)") { SessionState(rawValue: $0) }
    static let maxShown = Option.int("max-shown", "<n>", in: 0...1_000_000, help: "Raise the live frontier to slide n (0-based).")
    static let allowDownload = Option.value(
        "allow-download", "<true|false>", help: "Ended sessions release the whole deck when true.", mustBe: "true or false"
    ) { text in text == "true" ? true : text == "false" ? false : nil }
    static let venueNetwork = Option.values("venue-network", "<cidr>", help: "A venue network, e.g. 10.20.0.0/16; may be repeated.") { text in
        try IPNetwork(parsing: text)
    }
    static let noVenueNetworks = Option.flag("no-venue-networks", help: "Remove every venue network (the session is no longer venue-locked).")
    static let advanceTo = Option.int("to", "<n>", in: 0...1_000_000, help: "The slide now shown (0-based, required).").required()
    static let id = Positional.one("id", help: "The session id.")

    /// The change `set` asks for; usage errors for options that exclude each other or for nothing to set.
    static func update(_ arguments: Arguments) throws -> SessionUpdate {
        var update = SessionUpdate()
        update.state = arguments[state]
        update.maxShown = arguments[maxShown]
        update.allowDownload = arguments[allowDownload]
        let networks = arguments[venueNetwork]
        if arguments[noVenueNetworks] {
            guard networks.isEmpty else { throw UsageError("--venue-network and --no-venue-networks exclude each other") }
            update.venueNetworks = []
        } else if !networks.isEmpty {
            update.venueNetworks = networks
        }
        guard !update.isEmpty else { throw UsageError("nothing to set: give --state, --max-shown, --allow-download or venue networks") }
        return update
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
                state, maxShown, allowDownload, venueNetwork, noVenueNetworks, ServerCommand.jsonOption,
            ],
            positionals: [id],
            validate: { arguments in _ = try update(arguments) },
            run: { arguments in
                let record = try AdminCommand.administration(arguments, console).setSession(id: arguments[id], try update(arguments))
                show(record, arguments, console: console)
                return ExitCode.success
            })
    }

    static func advance(_ console: Console) -> Command {
        Command(
            name: "advance", abstract: "The presenter's advance: raise the frontier to slide n (live; rehearsal moves its own).",
            options: [ServerCommand.dataOption, ServerCommand.databaseOption, advanceTo, ServerCommand.jsonOption],
            positionals: [id],
            run: { arguments in
                let (record, _) = try AdminCommand.administration(arguments, console).advance(sessionId: arguments[id], to: arguments[advanceTo])
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
                console.list(sessions, asJSON: arguments[ServerCommand.jsonOption], json: StaffJSON.session, line: line)
                return ExitCode.success
            })
    }

    static func show(_ record: SessionRecord, _ arguments: Arguments, console: Console) {
        if arguments[ServerCommand.jsonOption] { console.out(json: StaffJSON.session(record)) } else { console.out(line(record)) }
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
