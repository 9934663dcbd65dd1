import Testing

@testable import PulseCommandLine

struct CommandLineToolTests {
    let command = Command(
        name: "tool", abstract: "A tool.",
        options: [.value("out", "<dir>", short: "o", help: "Out."), .flag("json", help: "JSON."), .value("tag", "<t>", help: "Tags.", repeating: true)],
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
