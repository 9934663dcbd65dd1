import Foundation
import PulseCommandLine
import struct PulseConsole.ConsoleConfiguration
import enum PulseConsole.PresenterLink
import PulseServer
import PulseServerStorage
import PulseStaffAPI
import PulseCore

/// `pulse-server admin …`: minting and revoking credentials, devices, session settings.
/// Each operation is `Administration`'s, the same the staff API calls; the records' JSON is the staff API's
/// (`StaffJSON`).
enum AdminCommand {
    static func command(console: Console) -> Command {
        Command(
            name: "admin",
            abstract: "Mint device codes and tokens, revoke them, list and revoke devices, set session state and frontier, read the audit log.",
            discussion: "Codes and tokens are printed once, on standard output, and stored only as SHA-256 hashes.",
            subcommands: [
                Command(name: "device-code", abstract: "Single-use enrollment codes for staff-managed devices.",
                        subcommands: [deviceCodeCreate(console)]),
                Command(name: "registration-token", abstract: "Durable enrollment tokens for a series (an attendee's link).",
                        subcommands: [registrationTokenCreate(console)]),
                Command(name: "staff-token", abstract: "Bearer tokens for /api/staff (console, presenter's clicker).",
                        subcommands: [staffTokenCreate(console)]),
                Command(name: "token", abstract: "List or revoke device codes and tokens of any kind.",
                        subcommands: [tokenList(console), tokenRevoke(console)]),
                Command(name: "device", abstract: "List or revoke enrolled devices.", subcommands: [deviceList(console), deviceRevoke(console)]),
                SessionAdminCommand.command(console: console),
                AuditAdminCommand.command(console: console),
                AnswerKeyAdminCommand.command(console: console),
            ])
    }

    static let expiresOption = expires(help: "Lifetime: 90s, 30m, 2h, 7d.")
    static let series = Option.value("series", "<id>", help: "Devices enrolled with it may read the whole series.")
    static let session = Option.value("session", "<id>", help: "Devices enrolled with it may read this session only.")
    static let tokenSeries = Option.value("series", "<id>", help: "The series (required).").required()
    static let maxDevices = Option.int("max-devices", "<n>", in: 1...10_000_000, help: "Devices at most (default: no cap).")
    static let enrollRate = Option.int(
        "enroll-rate", "<per-second>", in: 1...1_000_000, help: "Its own enrollments per second, all addresses together (default: serve's --token-enroll-rate).")
    static let enrollBurst = Option.int("enroll-burst", "<n>", in: 1...1_000_000, help: "Its own enrollment burst (default: serve's --token-enroll-burst).")
    static let maxStreams = Option.int(
        "max-streams", "<n>", in: 0...1_000_000, help: "Event streams its devices may hold open at once, per instance (default: serve's --token-max-streams).")
    static let role = Option.value(
        "role", "<role>", help: "admin (everything; the default), moderator (reads: sessions, live view, reports, devices) or presenter (one session's clicker).",
        mustBe: "one of \(StaffRole.names)") { StaffRole(rawValue: $0) }
    static let staffSession = Option.value(
        "session", "<id>", help: "The one session the token may act on: required for a presenter, optional for a moderator, never for an admin.")
    static let presenterServer = Option.value(
        "public-url", "<url>", help: "The address browsers reach the server at (serve --public-url), for a presenter's whole link; without it, its path.",
        mustBe: "an http or https URL like https://sync.example.org", parse: { ConsoleConfiguration.publicURL(parsing: $0) })
    static let tokenOption = Option.value(
        "token", "<token>", help: "The code or token, or its 12-digit id (instead of the positional: for a token that begins with '-').")
    static let withDevices = Option.flag("with-devices", help: "Revoke every device it enrolled as well.")
    static let tokenArgument = Positional.optional("token", help: "The code or token, or its 12-digit id.")
    static let deviceID = Positional.one("id", help: "The device id ('device list').")

    /// `--expires`, in seconds (`Lifetime.seconds`).
    static func expires(help: String) -> OptionHandle<Int64?> {
        Option.value("expires", "<duration>", help: help, mustBe: "a duration like 90s, 30m, 2h or 7d (up to 366d)") { Lifetime.seconds($0) }
    }

    static func administration(_ arguments: Arguments, _ console: Console) throws -> Administration {
        Administration(storage: try ServerCommand.storage(arguments, console))
    }

    static func lifetime(_ arguments: Arguments) throws -> Int64? { arguments[expiresOption] }

    static func printMinted(_ minted: Administration.Minted, _ arguments: Arguments, console: Console) {
        if arguments[ServerCommand.jsonOption] {
            console.out(json: StaffAPI.minted(minted))
        } else {
            console.out(minted.text)
        }
        var note = "\(minted.kind.rawValue) \(minted.listingId)"
        if let scope = minted.scope { note += " for \(scope)" }
        if let max = minted.maxDevices { note += ", up to \(max) devices" }
        if let limits = limitsText(minted.limits) { note += ", " + limits }
        note += minted.expiresAt.map { ", expires \(TimeText.iso($0))" } ?? ", no expiry"
        console.err(note + "; shown once, stored hashed")
    }

    /// The scope of a device code: exactly one of --series and --session.
    static func scope(_ arguments: Arguments) throws -> DeviceScope {
        switch (arguments[series], arguments[session]) {
        case let (series?, nil): .series(series)
        case let (nil, session?): .session(session)
        default: throw UsageError("give exactly one of --series <id> or --session <id>")
        }
    }

    static func deviceCodeCreate(_ console: Console) -> Command {
        Command(
            name: "create", abstract: "Mint a single-use device code (prints it) for one session or a whole series.",
            options: [
                ServerCommand.dataOption, ServerCommand.databaseOption, series, session,
                expires(help: "Lifetime: 90s, 30m, 2h, 7d (default 24h)."), ServerCommand.jsonOption,
            ],
            validate: { arguments in
                _ = try scope(arguments)
                try ServerCommand.checkStorageGiven(arguments, console)
            },
            run: { arguments in
                let scope = try scope(arguments)
                let minted = try administration(arguments, console).createDeviceCode(
                    scope: scope, lifetime: try lifetime(arguments) ?? Administration.deviceCodeLifetime)
                printMinted(minted, arguments, console: console)
                return ExitCode.success
            })
    }

    static func registrationTokenCreate(_ console: Console) -> Command {
        Command(
            name: "create", abstract: "Mint a durable registration token (prints it) for a series.",
            options: [
                ServerCommand.dataOption, ServerCommand.databaseOption, tokenSeries,
                maxDevices, enrollRate, enrollBurst, maxStreams,
                expiresOption, ServerCommand.jsonOption,
            ],
            run: { arguments in
                let series = arguments[tokenSeries]
                let limits = TokenLimits(
                    enrollRate: arguments[enrollRate], enrollBurst: arguments[enrollBurst], maxStreams: arguments[maxStreams])
                let minted = try administration(arguments, console).createRegistrationToken(
                    series: series, maxDevices: arguments[maxDevices], limits: limits, lifetime: try lifetime(arguments))
                printMinted(minted, arguments, console: console)
                return ExitCode.success
            })
    }

    static func staffTokenCreate(_ console: Console) -> Command {
        Command(
            name: "create", abstract: "Mint a staff bearer token (prints it) for /api/staff, with a role.",
            discussion: "The session must have been imported. docs/server-routes.md lists what each role may do.",
            examples: [
                "pulse-server admin staff-token create --data /var/lib/pulse --role presenter --session keynote --expires 12h --public-url https://sync.example.org",
            ],
            options: [ServerCommand.dataOption, ServerCommand.databaseOption, role, staffSession, expiresOption, presenterServer, ServerCommand.jsonOption],
            validate: { arguments in
                if let refusal = (arguments[role] ?? .admin).refusal(session: arguments[staffSession]) { throw UsageError(refusal) }
            },
            run: { arguments in
                let minted = try administration(arguments, console).createStaffToken(
                    role: arguments[role] ?? .admin, session: arguments[staffSession], lifetime: try lifetime(arguments))
                printMinted(minted, arguments, console: console)
                if minted.staffRole == .presenter {
                    // The token stays alone on standard output (scripts read it); the link goes with the notes.
                    console.err("presenter link (shown once): " + PresenterLink.text(server: arguments[presenterServer], token: minted.text))
                }
                return ExitCode.success
            })
    }

    static func tokenRevoke(_ console: Console) -> Command {
        Command(
            name: "revoke", abstract: "Revoke a device code or token, given by its text or by the id 'token list' shows.",
            discussion: """
                A token may begin with '-': give it after '--' or as --token=<token>. With --with-devices every device the \
                token enrolled is revoked too, in the same transaction (a leaked attendee link: its devices are cut at once, \
                their event streams closed); it also works on a token revoked before.
                """,
            examples: ["pulse-server admin token revoke --data /var/lib/pulse 3f0c9a1b2d4e", "pulse-server admin token revoke --data /var/lib/pulse --with-devices -- -Xy…"],
            options: [
                ServerCommand.dataOption, ServerCommand.databaseOption, tokenOption, withDevices,
            ],
            positionals: [tokenArgument],
            validate: { arguments in
                let given = [arguments[tokenOption], arguments[tokenArgument]].compactMap { $0 }
                guard given.count == 1 else {
                    throw UsageError(given.isEmpty ? "missing <token> (or --token <token>)" : "give the token once: as <token> or as --token")
                }
            },
            run: { arguments in
                let token = arguments[tokenOption] ?? arguments[tokenArgument] ?? ""
                let revocation = try administration(arguments, console).revokeToken(token, withDevices: arguments[withDevices])
                var note = revocation.credential ? "revoked" : "already revoked"
                if arguments[withDevices] { note += "; \(revocation.devices) device\(revocation.devices == 1 ? "" : "s") it enrolled revoked" }
                console.err(note)
                return ExitCode.success
            })
    }

    static func tokenList(_ console: Console) -> Command {
        Command(
            name: "list", abstract: "List device codes and tokens (ids only, never the secrets), newest first, with how many devices each enrolled in the last minute.",
            options: [ServerCommand.dataOption, ServerCommand.databaseOption, ServerCommand.jsonOption],
            run: { arguments in
                let storage = try ServerCommand.storage(arguments, console)
                let records = try storage.credentials()
                let recent = try storage.recentEnrollments(since: TimeText.now() - 60)
                console.list(records, asJSON: arguments[ServerCommand.jsonOption], json: { StaffJSON.credential($0, recent: recent[$0.id] ?? 0) }, line: { line($0, recent: recent[$0.id] ?? 0) })
                return ExitCode.success
            })
    }

    /// `recent`: devices it enrolled in the last minute (a leaked link shows as a spike).
    static func line(_ record: CredentialRecord, recent: Int = 0) -> String {
        var scope = record.scope.map(\.description) ?? "-"
        if record.kind == .staffToken {
            scope = (record.staffRole?.rawValue ?? "unknown-role") + (record.staffSession.map { " session \($0)" } ?? "")
        }
        var parts = [record.id, record.kind.rawValue, scope, StaffJSON.status(record)]
        parts.append("devices \(record.devicesEnrolled)" + (record.maxDevices.map { "/\($0)" } ?? "") + (record.kind == .staffToken ? "" : " (\(recent) in the last minute)"))
        if let limits = limitsText(record.limits) { parts.append(limits) }
        parts.append("created \(TimeText.iso(record.createdAt))")
        if let expires = record.expiresAt { parts.append("expires \(TimeText.iso(expires))") }
        return parts.joined(separator: "  ")
    }

    /// A registration token's own limits, when it has any: `enroll 5/s burst 50, streams ≤ 200`.
    static func limitsText(_ limits: TokenLimits) -> String? {
        var parts: [String] = []
        if limits.enrollRate != nil || limits.enrollBurst != nil {
            parts.append("enroll " + [limits.enrollRate.map { "\($0)/s" }, limits.enrollBurst.map { "burst \($0)" }].compactMap { $0 }.joined(separator: " "))
        }
        if let streams = limits.maxStreams { parts.append("streams ≤ \(streams)") }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    static func deviceList(_ console: Console) -> Command {
        Command(
            name: "list", abstract: "List enrolled devices, oldest first.",
            options: [ServerCommand.dataOption, ServerCommand.databaseOption, ServerCommand.jsonOption],
            run: { arguments in
                let devices = try ServerCommand.storage(arguments, console).devices()
                console.list(devices, asJSON: arguments[ServerCommand.jsonOption], json: StaffJSON.device) { device in
                    [
                        device.id, device.platform, "\"\(DeviceText.escaped(device.name))\"", device.scope.description, device.isRevoked ? "revoked" : "active",
                        "enrolled \(TimeText.iso(device.enrolledAt))", "via \(device.credentialId)",
                    ].joined(separator: "  ")
                }
                return ExitCode.success
            })
    }

    static func deviceRevoke(_ console: Console) -> Command {
        Command(
            name: "revoke", abstract: "Revoke a device: every request it signs is refused from now on.",
            options: [ServerCommand.dataOption, ServerCommand.databaseOption], positionals: [deviceID],
            run: { arguments in
                try administration(arguments, console).revokeDevice(id: arguments[deviceID])
                console.err("revoked")
                return ExitCode.success
            })
    }
}
