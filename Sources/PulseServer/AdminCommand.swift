import Foundation
import PulseCommandLine
import PulseCore

/// `pulse-server admin …`: minting and revoking credentials, devices, session settings.
/// Each operation is `Administration`'s, the same the staff API calls.
enum AdminCommand {
    static func command(console: Console) -> Command {
        Command(
            name: "admin",
            abstract: "Mint device codes and tokens, revoke them, list and revoke devices, set session state and frontier.",
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
            ])
    }

    static let expiresOption = Option.value("expires", "<duration>", help: "Lifetime: 90s, 30m, 2h, 7d.")

    static func administration(_ arguments: Arguments, _ console: Console) throws -> Administration {
        Administration(storage: try ServerCommand.storage(arguments, console))
    }

    static func lifetime(_ arguments: Arguments) throws -> Int64? {
        guard let text = arguments.value("expires") else { return nil }
        guard let seconds = Lifetime.seconds(text) else { throw UsageError("--expires must be a duration like 90s, 30m, 2h or 7d (up to 366d), got \"\(text)\"") }
        return seconds
    }

    static func printMinted(_ minted: Administration.Minted, _ arguments: Arguments, console: Console) {
        if arguments.flag("json") {
            var fields: [String: JSONValue] = ["kind": .string(minted.kind.rawValue), "id": .string(minted.listingId), "secret": .string(minted.text)]
            if let scope = minted.scope { fields["scope"] = ["kind": .string(scope.kind), "id": .string(scope.id)] }
            if let max = minted.maxDevices { fields["maxDevices"] = .int(max) }
            if let expires = minted.expiresAt { fields["expiresAt"] = .string(TimeText.iso(expires)) }
            console.out(json: .object(fields))
        } else {
            console.out(minted.text)
        }
        var note = "\(minted.kind.rawValue) \(minted.listingId)"
        if let scope = minted.scope { note += " for \(scope)" }
        if let max = minted.maxDevices { note += ", up to \(max) devices" }
        note += minted.expiresAt.map { ", expires \(TimeText.iso($0))" } ?? ", no expiry"
        console.err(note + "; shown once, stored hashed")
    }

    static func deviceCodeCreate(_ console: Console) -> Command {
        Command(
            name: "create", abstract: "Mint a single-use device code (prints it) for one session or a whole series.",
            options: [
                ServerCommand.dataOption, ServerCommand.databaseOption, .value("series", "<id>", help: "Devices enrolled with it may read the whole series."),
                .value("session", "<id>", help: "Devices enrolled with it may read this session only."),
                .value("expires", "<duration>", help: "Lifetime: 90s, 30m, 2h, 7d (default 24h)."), ServerCommand.jsonOption,
            ],
            run: { arguments in
                let scope: DeviceScope
                switch (arguments.value("series"), arguments.value("session")) {
                case let (series?, nil): scope = .series(series)
                case let (nil, session?): scope = .session(session)
                default: throw UsageError("give exactly one of --series <id> or --session <id>")
                }
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
                ServerCommand.dataOption, ServerCommand.databaseOption, .value("series", "<id>", help: "The series (required)."),
                .value("max-devices", "<n>", help: "Devices at most (default: no cap)."), expiresOption, ServerCommand.jsonOption,
            ],
            run: { arguments in
                guard let series = arguments.value("series") else { throw UsageError("missing --series <id>") }
                let minted = try administration(arguments, console).createRegistrationToken(
                    series: series, maxDevices: try arguments.int("max-devices", in: 1...10_000_000), lifetime: try lifetime(arguments))
                printMinted(minted, arguments, console: console)
                return ExitCode.success
            })
    }

    static func staffTokenCreate(_ console: Console) -> Command {
        Command(
            name: "create", abstract: "Mint a staff bearer token (prints it) for /api/staff.",
            options: [ServerCommand.dataOption, ServerCommand.databaseOption, expiresOption, ServerCommand.jsonOption],
            run: { arguments in
                printMinted(try administration(arguments, console).createStaffToken(lifetime: try lifetime(arguments)), arguments, console: console)
                return ExitCode.success
            })
    }

    static func tokenRevoke(_ console: Console) -> Command {
        Command(
            name: "revoke", abstract: "Revoke a device code or token, given by its text or by the id 'token list' shows.",
            options: [ServerCommand.dataOption, ServerCommand.databaseOption],
            positionals: [Positional("token", help: "The code or token, or its 12-digit id.")],
            run: { arguments in
                try administration(arguments, console).revokeToken(try arguments.required("token"))
                console.err("revoked")
                return ExitCode.success
            })
    }

    static func tokenList(_ console: Console) -> Command {
        Command(
            name: "list", abstract: "List device codes and tokens (ids only, never the secrets), newest first.",
            options: [ServerCommand.dataOption, ServerCommand.databaseOption, ServerCommand.jsonOption],
            run: { arguments in
                let records = try ServerCommand.storage(arguments, console).credentials()
                console.list(records, asJSON: arguments.flag("json"), json: json, line: line)
                return ExitCode.success
            })
    }

    static func status(_ record: CredentialRecord, now: Int64 = TimeText.now()) -> String {
        if record.revokedAt != nil { return "revoked" }
        if record.kind == .deviceCode && record.usedAt != nil { return "used" }
        if let expires = record.expiresAt, expires <= now { return "expired" }
        if let max = record.maxDevices, record.devicesEnrolled >= max { return "full" }
        return "active"
    }

    static func line(_ record: CredentialRecord) -> String {
        var parts = [record.id, record.kind.rawValue, record.scope.map(\.description) ?? "-", status(record)]
        parts.append("devices \(record.devicesEnrolled)" + (record.maxDevices.map { "/\($0)" } ?? ""))
        parts.append("created \(TimeText.iso(record.createdAt))")
        if let expires = record.expiresAt { parts.append("expires \(TimeText.iso(expires))") }
        return parts.joined(separator: "  ")
    }

    static func json(_ record: CredentialRecord) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(record.id), "kind": .string(record.kind.rawValue), "status": .string(status(record)),
            "devicesEnrolled": .int(record.devicesEnrolled), "createdAt": .string(TimeText.iso(record.createdAt)),
        ]
        if let scope = record.scope { fields["scope"] = ["kind": .string(scope.kind), "id": .string(scope.id)] }
        if let max = record.maxDevices { fields["maxDevices"] = .int(max) }
        if let at = record.expiresAt { fields["expiresAt"] = .string(TimeText.iso(at)) }
        if let at = record.usedAt { fields["usedAt"] = .string(TimeText.iso(at)) }
        if let at = record.revokedAt { fields["revokedAt"] = .string(TimeText.iso(at)) }
        return .object(fields)
    }

    static func deviceList(_ console: Console) -> Command {
        Command(
            name: "list", abstract: "List enrolled devices, oldest first.",
            options: [ServerCommand.dataOption, ServerCommand.databaseOption, ServerCommand.jsonOption],
            run: { arguments in
                let devices = try ServerCommand.storage(arguments, console).devices()
                console.list(devices, asJSON: arguments.flag("json"), json: json) { device in
                    [
                        device.id, device.platform, "\"\(DeviceText.escaped(device.name))\"", device.scope.description, device.isRevoked ? "revoked" : "active",
                        "enrolled \(TimeText.iso(device.enrolledAt))", "via \(device.credentialId)",
                    ].joined(separator: "  ")
                }
                return ExitCode.success
            })
    }

    static func json(_ device: DeviceRecord) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(device.id), "platform": .string(device.platform), "name": .string(device.name),
            "scope": ["kind": .string(device.scope.kind), "id": .string(device.scope.id)],
            "publicKey": .string(Data(device.publicKey).base64EncodedString()), "enrolledAt": .string(TimeText.iso(device.enrolledAt)),
            "credential": .string(device.credentialId), "status": .string(device.isRevoked ? "revoked" : "active"),
        ]
        if let at = device.revokedAt { fields["revokedAt"] = .string(TimeText.iso(at)) }
        return .object(fields)
    }

    static func deviceRevoke(_ console: Console) -> Command {
        Command(
            name: "revoke", abstract: "Revoke a device: every request it signs is refused from now on.",
            options: [ServerCommand.dataOption, ServerCommand.databaseOption], positionals: [Positional("id", help: "The device id ('device list').")],
            run: { arguments in
                try administration(arguments, console).revokeDevice(id: try arguments.required("id"))
                console.err("revoked")
                return ExitCode.success
            })
    }
}
