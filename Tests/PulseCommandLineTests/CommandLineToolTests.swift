import Testing

@testable import PulseCommandLine
import PulseCore

struct CommandLineToolTests {
    let command = Command(
        name: "tool", abstract: "A tool.",
        options: [Option.value("out", "<dir>", short: "o", help: "Out."), Option.flag("json", help: "JSON."), Option.values("tag", "<t>", help: "Tags.")],
        positionals: [Positional("input", help: "In."), Positional("rest", help: "More.", optional: true, variadic: true)])

    @Test func parsesOptionsFlagsAndPositionals() throws {
        let parsed = try #require(try CommandLineTool.parse(["in.json", "--out=o", "--json", "--tag", "a", "--tag", "b", "x", "y"], for: command))
        #expect(parsed.positional("input") == "in.json")
        #expect(parsed.value("out") == "o")
        #expect(parsed.flag("json"))
        #expect(parsed.values("tag") == ["a", "b"])
        #expect(parsed.positionalValues("rest") == ["x", "y"])
        let short = try #require(try CommandLineTool.parse(["-o", "d", "--", "--json"], for: command))
        #expect(short.value("out") == "d")
        #expect(short.positional("input") == "--json")
        #expect(!short.flag("json"))
    }

    @Test func usageErrors() {
        #expect(throws: UsageError.self) { try CommandLineTool.parse(["--nope"], for: command) }
        #expect(throws: UsageError.self) { try CommandLineTool.parse([], for: command) }
        #expect(throws: UsageError.self) { try CommandLineTool.parse(["a", "--out"], for: command) }
        #expect(throws: UsageError.self) { try CommandLineTool.parse(["a", "--json=1"], for: command) }
        #expect(throws: UsageError.self) { try CommandLineTool.parse(["a", "-o", "x", "--out", "y"], for: command) }
    }

    @Test func helpAndExitCodes() {
        var printed: [String] = []
        let code = CommandLineTool.main(command, arguments: ["--help"], errorHandler: { _ in 1 }, print: { printed.append($0) }, printError: { _ in })
        #expect(code == 0)
        #expect(printed.joined().contains("--out <dir>"))
        let usage = CommandLineTool.main(command, arguments: ["--bad"], errorHandler: { _ in 1 }, print: { _ in }, printError: { _ in })
        #expect(usage == ExitCode.usage)
    }
}

struct SuggestionTests {
    @Test(arguments: [
        ("biuld", ["build", "verify", "diff", "keys", "push", "gc", "help"], "build"),
        ("--output", ["--out", "--deck", "--json", "--quiet", "--help"], "--out"),
        ("foto", ["id", "name", "role", "company", "bio", "photo"], "photo"),
        ("speaker", ["speakers", "agenda", "branding"], "speakers"),
        ("Europe/Lisbn", ["Europe/Berlin", "Europe/Lisbon", "Europe/London"], "Europe/Lisbon"),
        ("veriyf", ["build", "verify", "diff"], "verify"),
        ("BUILD", ["build", "verify"], "build"),
    ])
    func suggestsTheClosestName(_ typed: String, _ candidates: [String], _ expected: String) {
        #expect(Suggestion.closest(to: typed, among: candidates) == expected)
    }

    @Test func suggestsNothingFarAway() {
        #expect(Suggestion.closest(to: "zzz", among: ["build", "verify"]) == nil)
        #expect(Suggestion.closest(to: "upload", among: ["build", "verify", "diff", "push"]) == nil)
        #expect(Suggestion.closest(to: "x", among: ["id"]) == nil)
        #expect(Suggestion.didYouMean("zzz", among: ["build"]) == "")
    }

    @Test func mistypedCommandsAndOptionsGetASuggestion() {
        let tool = Command(name: "tool", abstract: "A tool.", subcommands: [
            Command(name: "build", abstract: "Build.", options: [Option.value("out", "<dir>", help: "Out.")], run: { _ in 0 }),
            Command(name: "verify", abstract: "Verify.", run: { _ in 0 }),
        ])
        var errors: [String] = []
        let code = CommandLineTool.main(tool, arguments: ["biuld"], errorHandler: { _ in 1 }, print: { _ in }, printError: { errors.append($0) })
        #expect(code == ExitCode.usage)
        #expect(errors.first == #"tool: error: unknown command "biuld"; did you mean "build"?"#)
        errors = []
        _ = CommandLineTool.main(tool, arguments: ["build", "--output", "x"], errorHandler: { _ in 1 }, print: { _ in }, printError: { errors.append($0) })
        #expect(errors.first == "tool: error: build: unknown option --output; did you mean --out?")
    }

    /// A token begins with '-' 1 time in 64 and with '--' 1 time in 4,096: either way the refusal never echoes
    /// it whole (CI once drew a `--H…` token, which used to be shown as an unknown long option).
    @Test(arguments: ["-HPH6ZOtd4VCIdvq446hjdKr2cS_4Z-dC_3HCCYnt4", "--HPH6ZOtd4VCIdvq446hjdKr2cS_4Z-dC_3HCCYnt4", "--abcdefghijklmnopqrstuvwxyz0123456789-abcdefgh"])
    func aValueBeginningWithADashIsNeverEchoedWhole(_ value: String) {
        let tool = Command(name: "tool", abstract: "A tool.", subcommands: [
            Command(name: "revoke", abstract: "Revoke.", positionals: [Positional("token", help: "Token.")], run: { _ in 0 }),
        ])
        var errors: [String] = []
        let code = CommandLineTool.main(tool, arguments: ["revoke", value], errorHandler: { _ in 1 }, print: { _ in }, printError: { errors.append($0) })
        #expect(code == ExitCode.usage)
        #expect(errors.count == 2 && !errors.joined().contains(value) && errors.first?.contains("goes after '--'") == true, "\(errors)")
        #expect(CommandLineTool.isOptionShaped("--max-streams") && CommandLineTool.isOptionShaped("-x") && !CommandLineTool.isOptionShaped("--Token"))
    }

    @Test func everyToolHasVersion() {
        var printed: [String] = []
        let tool = Command(name: "some-tool", abstract: "A tool.", run: { _ in 0 })
        let code = CommandLineTool.main(tool, arguments: ["--version"], errorHandler: { _ in 1 }, print: { printed.append($0) }, printError: { _ in })
        #expect(code == 0)
        #expect(printed == ["some-tool \(ToolVersion.current)"])
        let help = CommandLineTool.help(for: Command(name: "t", abstract: "T.", examples: ["t --go   # go"], run: { _ in 0 }), path: ["t"])
        #expect(help.contains("EXAMPLES:\n  t --go   # go"))
        #expect(help.contains("--version"))
    }
}

struct ByteCountTests {
    @Test func formatsInSIUnits() {
        #expect(ByteCount.format(0) == "0 B")
        #expect(ByteCount.format(999) == "999 B")
        #expect(ByteCount.format(1000) == "1.0 kB")
        #expect(ByteCount.format(1_234_567) == "1.2 MB")
        #expect(ByteCount.format(300_000_000) == "300.0 MB")
        #expect(ByteCount.format(2_500_000_000) == "2.5 GB")
    }

    @Test func parsesSizes() {
        #expect(ByteCount.parse("2MB") == 2_000_000)
        #expect(ByteCount.parse("500kB") == 500_000)
        #expect(ByteCount.parse("2m") == 2_000_000)
        #expect(ByteCount.parse("1.5GB") == 1_500_000_000)
        #expect(ByteCount.parse("2MiB") == 2_097_152)
        #expect(ByteCount.parse("123") == 123)
        #expect(ByteCount.parse("12B") == 12)
        #expect(ByteCount.parse("two") == nil)
        #expect(ByteCount.parse("MB") == nil)
        #expect(ByteCount.parse("-1MB") == nil)
    }
}
