import Foundation
import PulseCommandLine
import PulseConformance
import PulseCore
import PulseDevice

/// `pulse-conformance --server URL [--staff-token T] [--device-code C --registration-token R] [--json]`
public enum ConformanceCommand {
    static let server = Option.value("server", "<url>", help: "The sync server's base URL.")
    static let assetsURL = Option.value(
        "assets-url", "<url>", help: "Where assets and app configs are served (a CDN, pulse-origin; default the server).")
    static let staffToken = Option.value("staff-token", "<token>", help: "A staff token: mint codes, revoke a device, drive the session's state.")
    static let deviceCode = Option.value("device-code", "<code>", help: "Without a staff token: a device code to enroll with (it is used up).")
    static let registrationToken = Option.value(
        "registration-token", "<token>", help: "Without a staff token: a registration token (two devices enroll).")
    static let session = Option.value(
        "session", "<id>", help: "The session to test (with a staff token: to drive); default one with slides, draft first.")
    static let org = Option.value("org", "<slug>", help: "An organisation whose app config to check.")
    static let only = Option.values("only", "<rule>", help: "Run only this rule (repeatable, or comma-separated); see --list.")
    static let enrollProbe = Option.int("enroll-probe", "<n>", in: 1...100_000, help: "Enrollments the rate-limit rule makes at most (default 200).")
    static let deviceProbe = Option.int(
        "device-probe", "<n>", in: 1...100_000, help: "Signed calls the device rate-limit rule makes at most (default 60).")
    static let list = Option.flag("list", help: "List the rules and exit.")
    static let json = Option.flag("json", help: "Print the report as JSON.")

    public static func root(console: Console) -> Command {
        Command(
            name: "pulse-conformance",
            abstract: "Check that a sync server keeps every rule of the mobile contract; exit 1 on any failure.",
            discussion: """
                Runs the rules of ../shared/contract/pulse-mobile-sync.txt (and the details docs/server.md fixes) against
                --server and prints each with PASS, FAIL or SKIP and its evidence. With --staff-token it mints its own device
                codes and registration token, revokes a device of its own, and drives one session through draft, scheduled,
                rehearsal, live (one advance), a venue lock and ended: point it at a test copy of an event, not a live one.
                Without a staff token give --device-code and --registration-token; the rules that need staff are skipped.
                A skip is not a failure (the summary lists them); exit 1 when any rule fails. See docs/conformance.md.
                """,
            examples: [
                "pulse-conformance --server http://127.0.0.1:8080 --staff-token \"$STAFF\" --org acme",
                "pulse-conformance --server https://sync.example.net --assets-url https://cdn.example.net --device-code ABCD-EFGH-JKMN --registration-token \"$TOKEN\"",
            ],
            options: [server, assetsURL, staffToken, deviceCode, registrationToken, session, org, only, enrollProbe, deviceProbe, list, json],
            validate: validate,
            run: { arguments in try run(arguments, console: console) })
    }

    public static func main(_ arguments: [String], console: Console = .standard()) -> Int32 {
        CommandLineTool.main(
            root(console: console), arguments: arguments,
            errorHandler: { error in
                console.err("pulse-conformance: error: \(error)")
                return ExitCode.failure
            },
            print: console.out, printError: console.err)
    }

    /// The rules `--only` names, split at commas.
    static func onlyRules(_ arguments: Arguments) -> Set<String> {
        Set(arguments[only].flatMap { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } })
    }

    /// Usage errors before any rule runs: a server (unless --list), known rule ids, a way to enroll devices.
    static func validate(_ arguments: Arguments) throws {
        if arguments[list] { return }
        guard let serverText = arguments[server] else { throw UsageError("missing --server <url>") }
        _ = try SyncClient.baseURL(serverText, option: server.spelling)
        _ = try arguments[assetsURL].map { try SyncClient.baseURL($0, option: assetsURL.spelling) }
        for id in onlyRules(arguments) where RuleCatalog.rule(id) == nil {
            throw UsageError("no rule \(id)" + Suggestion.didYouMean(id, among: RuleCatalog.all.map(\.id)))
        }
        if arguments[staffToken] == nil && arguments[deviceCode] == nil && arguments[registrationToken] == nil {
            throw UsageError("give --staff-token, or --device-code and --registration-token: the rules need enrolled devices")
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws -> Int32 {
        if arguments[list] {
            for rule in RuleCatalog.all {
                console.out("\(rule.id.padding(toLength: 24, withPad: " ", startingAt: 0))  \(rule.source.padding(toLength: 9, withPad: " ", startingAt: 0)) \(rule.needsStaff ? "staff " : "      ")\(rule.summary)")
            }
            return ExitCode.success
        }
        guard let serverText = arguments[server] else { throw UsageError("missing --server <url>") }
        var options = ConformanceOptions(server: try SyncClient.baseURL(serverText, option: server.spelling))
        options.assets = try arguments[assetsURL].map { try SyncClient.baseURL($0, option: assetsURL.spelling) }
        options.staffToken = arguments[staffToken]
        options.deviceCode = arguments[deviceCode]
        options.registrationToken = arguments[registrationToken]
        options.session = arguments[session]
        options.org = arguments[org]
        options.enrollProbe = arguments[enrollProbe] ?? options.enrollProbe
        options.deviceProbe = arguments[deviceProbe] ?? options.deviceProbe
        options.only = onlyRules(arguments)
        let json = arguments[json]
        let run = try ConformanceRun(options: options, log: { line in if !json { console.err(line) } })
        let results: [RuleResult]
        do { results = try run.run() } catch let broken as Broken { throw DeviceError(.server, broken.reason) }
        if json {
            console.out(json: ConformanceReport.json(results, server: options.server.absoluteString))
        } else {
            ConformanceReport.table(results).forEach(console.out)
            console.out("")
            console.out("pulse-conformance: \(options.server.absoluteString): \(ConformanceReport.summary(results))")
        }
        return results.contains { $0.verdict == .fail } ? ExitCode.failure : ExitCode.success
    }
}
