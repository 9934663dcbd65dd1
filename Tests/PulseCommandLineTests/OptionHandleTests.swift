import Synchronization
import Testing

@testable import PulseCommandLine

/// Options declared once as typed handles: values converted and checked while parsing, required ones
/// enforced, `validate` run before `run`, and a handle the command does not list caught.
struct OptionHandleTests {
    enum Tool {
        static let out = Option.value("out", "<dir>", short: "o", help: "Out.").required()
        static let jobs = Option.int("jobs", "<n>", in: 1...8, help: "Jobs.")
        static let tags = Option.values("tag", "<t>", help: "Tags.")
        static let json = Option.flag("json", help: "JSON.")
        static let size = Option.value("size", "<size>", help: "Size.", mustBe: "a size such as 2MB") { Int($0.dropLast(2)).map { $0 * 1_000_000 } }
        static let port = Option.values("port", "<n>", help: "Ports.") { text -> Int in
            guard let port = Int(text), (1...65535).contains(port) else { throw PortError() }
            return port
        }
        static let input = Positional.one("input", help: "In.")
        static let rest = Positional.variadic("rest", help: "More.", optional: true)
    }

    struct PortError: Error, CustomStringConvertible { var description: String { "is not a port" } }

    static let command = Command(
        name: "tool", abstract: "A tool.", options: [Tool.out, Tool.jobs, Tool.tags, Tool.json, Tool.size, Tool.port],
        positionals: [Tool.input, Tool.rest])

    func parse(_ arguments: [String]) throws -> Arguments { try #require(try CommandLineTool.parse(arguments, for: Self.command)) }

    func usageError(_ arguments: [String]) -> String? {
        do { _ = try CommandLineTool.parse(arguments, for: Self.command) } catch let error as UsageError { return error.message } catch { return "\(error)" }
        return nil
    }

    @Test func handlesReadTypedValues() throws {
        let parsed = try parse(["in", "-o", "d", "--jobs", "3", "--tag", "a", "--tag=b", "--json", "--size", "2MB", "--port", "80", "x", "y"])
        #expect(parsed[Tool.out] == "d")
        #expect(parsed[Tool.jobs] == 3)
        #expect(parsed[Tool.tags] == ["a", "b"])
        #expect(parsed[Tool.json])
        #expect(parsed[Tool.size] == 2_000_000)
        #expect(parsed[Tool.port] == [80])
        #expect(parsed[Tool.input] == "in")
        #expect(parsed[Tool.rest] == ["x", "y"])
        let bare = try parse(["in", "--out", "d"])
        #expect(bare[Tool.jobs] == nil && bare[Tool.tags].isEmpty && !bare[Tool.json] && bare[Tool.size] == nil && bare[Tool.rest].isEmpty)
    }

    @Test func badValuesAreUsageErrorsNamingTheOption() {
        #expect(usageError(["in", "--out", "d", "--jobs", "9"]) == #"--jobs must be a whole number from 1 to 8, got "9""#)
        #expect(usageError(["in", "--out", "d", "--jobs", "two"]) == #"--jobs must be a whole number from 1 to 8, got "two""#)
        #expect(usageError(["in", "--out", "d", "--size", "big"]) == #"--size must be a size such as 2MB, got "big""#)
        #expect(usageError(["in", "--out", "d", "--port", "0"]) == "--port is not a port")
        #expect(usageError(["in"]) == "missing --out <dir>")
        #expect(usageError([]) == "missing <input>", "a missing positional is named before a missing option, as before")
        #expect(usageError(["in", "--out", "d"]) == nil)
    }

    @Test func requiredTakesItsOwnMessage() throws {
        let key = Option.value("key", "<file>", help: "Key.").required("missing --key <file>: the key is never guessed")
        let command = Command(name: "t", abstract: "T.", options: [key], run: { _ in 0 })
        do {
            _ = try CommandLineTool.parse([], for: command)
            Issue.record("no error")
        } catch let error as UsageError {
            #expect(error.message == "missing --key <file>: the key is never guessed")
        }
        #expect(key.spelling == "--key")
    }

    @Test func validateRunsBeforeRunAndItsErrorIsAUsageError() {
        let ran = Mutex(0)
        let a = Option.value("a", "<x>", help: "A."), b = Option.value("b", "<x>", help: "B.")
        let command = Command(
            name: "t", abstract: "T.", options: [a, b],
            validate: { arguments in
                if arguments[a] != nil && arguments[b] != nil { throw UsageError("give --a or --b, not both") }
            },
            run: { _ in
                ran.withLock { $0 += 1 }
                return 0
            })
        var errors: [String] = []
        let code = CommandLineTool.main(command, arguments: ["--a", "1", "--b", "2"], errorHandler: { _ in 1 }, print: { _ in }, printError: { errors.append($0) })
        #expect(code == ExitCode.usage)
        #expect(errors.first == "t: error: give --a or --b, not both")
        #expect(ran.withLock { $0 } == 0, "run never starts when validate fails")
        #expect(CommandLineTool.main(command, arguments: ["--a", "1"], errorHandler: { _ in 1 }, print: { _ in }, printError: { _ in }) == 0)
        #expect(ran.withLock { $0 } == 1)
    }

    @Test func helpListsTheHandlesDeclarations() {
        let help = CommandLineTool.help(for: Self.command, path: ["tool"])
        #expect(help.contains("-o, --out <dir>"))
        #expect(help.contains("--jobs <n>"))
        #expect(help.contains("--json "))
        #expect(help.contains("USAGE: tool [options] <input> [<rest> ...]"))
    }

    @Test func aHandleTheCommandDoesNotListIsCaught() throws {
        let parsed = try parse(["in", "--out", "d"])
        let other = Option.value("other", "<x>", help: "Not listed.")
        #expect(!parsed.declared.contains(other.spelling))
        #expect(parsed.declared.contains(Tool.out.spelling) && parsed.declared.contains("<input>"))
    }
}

struct ConsoleTests {
    final class Capture: Sendable {
        let lines = Mutex<[String]>([])
        let progress = Mutex("")
    }

    @Test func aProgressBarIsDrawnOnlyOnATerminalAndClearedByTheNextLine() {
        let capture = Capture()
        let terminal = Console(
            out: { line in capture.lines.withLock { $0.append(line) } }, err: { _ in },
            progress: { text in capture.progress.withLock { $0 += text } }, environment: [:])
        let bar = ProgressBar(terminal)
        bar.update("  deck", done: 5, total: 10, detail: "slides")
        #expect(capture.progress.withLock { $0 } == "\r  deck [###############...............] 5/10 slides\u{1b}[K")
        terminal.out("done")
        #expect(capture.progress.withLock { $0 }.hasSuffix("\r\u{1b}[K"), "a line clears the bar first")
        #expect(capture.lines.withLock { $0 } == ["done"])
        terminal.out("again")
        #expect(capture.progress.withLock { $0 }.components(separatedBy: "\r\u{1b}[K").count == 2, "cleared once, not per line")

        let piped = Console(out: { _ in }, err: { _ in }, environment: [:])
        #expect(!piped.showsProgress)
        ProgressBar(piped).update(done: 1, total: 2)
        bar.update("  deck", done: 10, total: 10)
        bar.finish()
        #expect(capture.progress.withLock { $0 }.hasSuffix("10/10\u{1b}[K\n"), "finish keeps the last bar and ends its line")
    }

    @Test func lineAndRateLimit() {
        #expect(ProgressBar.line(done: 0, total: 4, width: 4) == "[....] 0/4")
        #expect(ProgressBar.line(label: "x", done: 4, total: 4, detail: "files", width: 4) == "x [####] 4/4 files")
        #expect(ProgressBar.line(done: 9, total: 4, width: 4) == "[####] 9/4", "never more than full")
        let capture = Capture()
        let console = Console(out: { _ in }, err: { _ in }, progress: { text in capture.progress.withLock { $0 += text } }, environment: [:])
        let bar = ProgressBar(console)
        for done in 1...50 { bar.update(done: done, total: 100) }
        #expect(capture.progress.withLock { $0 }.components(separatedBy: "\r").count - 1 == 1, "at most ten a second")
        bar.update(done: 100, total: 100)
        #expect(capture.progress.withLock { $0 }.hasSuffix("100/100\u{1b}[K"), "the end is always drawn")
    }
}
