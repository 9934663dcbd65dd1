import Foundation
import PulseCommandLine
import PulseCore
import PulseDevice

/// `pulse-conformance --server URL [--staff-token T] [--device-code C --registration-token R] [--json]`
public enum ConformanceCommand {
    public static func root(console: DeviceConsole) -> Command {
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
            options: [
                .value("server", "<url>", help: "The sync server's base URL."),
                .value("assets-url", "<url>", help: "Where assets and app configs are served (a CDN, pulse-origin; default the server)."),
                .value("staff-token", "<token>", help: "A staff token: mint codes, revoke a device, drive the session's state."),
                .value("device-code", "<code>", help: "Without a staff token: a device code to enroll with (it is used up)."),
                .value("registration-token", "<token>", help: "Without a staff token: a registration token (two devices enroll)."),
                .value("session", "<id>", help: "The session to test (with a staff token: to drive); default one with slides, draft first."),
                .value("org", "<slug>", help: "An organisation whose app config to check."),
                .value("only", "<rule>", help: "Run only this rule (repeatable, or comma-separated); see --list.", repeating: true),
                .value("enroll-probe", "<n>", help: "Enrollments the rate-limit rule makes at most (default 200)."),
                .value("device-probe", "<n>", help: "Signed calls the device rate-limit rule makes at most (default 60)."),
                .flag("list", help: "List the rules and exit."),
                .flag("json", help: "Print the report as JSON."),
            ],
            run: { arguments in try run(arguments, console: console) })
    }

    public static func main(_ arguments: [String], console: DeviceConsole = .standard) -> Int32 {
        CommandLineTool.main(
            root(console: console), arguments: arguments,
            errorHandler: { error in
                console.err("pulse-conformance: error: \(error)")
                return ExitCode.failure
            },
            print: console.out, printError: console.err)
    }

    static func run(_ arguments: Arguments, console: DeviceConsole) throws -> Int32 {
        if arguments.legacyFlag("list") {
            for rule in RuleCatalog.all {
                console.out("\(rule.id.padding(toLength: 24, withPad: " ", startingAt: 0))  \(rule.source.padding(toLength: 9, withPad: " ", startingAt: 0)) \(rule.needsStaff ? "staff " : "      ")\(rule.summary)")
            }
            return ExitCode.success
        }
        guard let serverText = arguments.legacyValue("server") else { throw UsageError("missing --server <url>") }
        var options = ConformanceOptions(server: try SyncClient.baseURL(serverText, option: "--server"))
        options.assets = try arguments.legacyValue("assets-url").map { try SyncClient.baseURL($0, option: "--assets-url") }
        options.staffToken = arguments.legacyValue("staff-token")
        options.deviceCode = arguments.legacyValue("device-code")
        options.registrationToken = arguments.legacyValue("registration-token")
        options.session = arguments.legacyValue("session")
        options.org = arguments.legacyValue("org")
        options.enrollProbe = try arguments.legacyInt("enroll-probe", in: 1...100_000) ?? options.enrollProbe
        options.deviceProbe = try arguments.legacyInt("device-probe", in: 1...100_000) ?? options.deviceProbe
        options.only = Set(arguments.legacyValues("only").flatMap { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } })
        for id in options.only where RuleCatalog.rule(id) == nil {
            throw UsageError("no rule \(id)" + Suggestion.didYouMean(id, among: RuleCatalog.all.map(\.id)))
        }
        if options.staffToken == nil && options.deviceCode == nil && options.registrationToken == nil {
            throw UsageError("give --staff-token, or --device-code and --registration-token: the rules need enrolled devices")
        }
        let json = arguments.legacyFlag("json")
        let run = try ConformanceRun(options: options, log: { line in if !json { console.err(line) } })
        let results: [RuleResult]
        do { results = try run.run() } catch let broken as Broken { throw DeviceError(.server, broken.reason) }
        if json {
            console.out(String(decoding: ConformanceReport.json(results, server: options.server.absoluteString).prettyBytes.dropLast(), as: UTF8.self))
        } else {
            ConformanceReport.table(results).forEach(console.out)
            console.out("")
            console.out("pulse-conformance: \(options.server.absoluteString): \(ConformanceReport.summary(results))")
        }
        return results.contains { $0.verdict == .fail } ? ExitCode.failure : ExitCode.success
    }
}
