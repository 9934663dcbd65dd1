import Foundation
import PulseCore

/// Parses arguments against a `Command` tree and runs the selected command.
public enum CommandLineTool {
    /// Runs `root` with `arguments` (without the program name). Tests call this with an array.
    /// - Returns: the exit code: the command's, 64 on a usage error.
    public static func main(
        _ root: Command, arguments: [String], errorHandler: (any Error) -> Int32,
        print: (String) -> Void = { Swift.print($0) },
        printError: (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    ) -> Int32 {
        if arguments.first == "--version" {
            print("\(root.name) \(ToolVersion.current)")
            return ExitCode.success
        }
        var command = root
        var path = [root.name]
        var rest = arguments[...]
        while let first = rest.first, let sub = command.subcommands.first(where: { $0.name == first }) {
            command = sub
            path.append(sub.name)
            rest = rest.dropFirst()
        }
        if rest.first == "help" && !command.subcommands.isEmpty {
            // `help <subcommand>` shows that subcommand's help.
            var target = command
            for name in rest.dropFirst() {
                guard let sub = target.subcommands.first(where: { $0.name == name }) else { break }
                target = sub
                path.append(sub.name)
            }
            print(help(for: target, path: path))
            return ExitCode.success
        }
        do {
            guard let parsed = try parse(Array(rest), for: command) else {
                print(help(for: command, path: path))
                return ExitCode.success
            }
            guard let run = command.run else {
                if let unknown = rest.first { throw unknownCommand(unknown, in: command) }
                throw UsageError("missing subcommand")
            }
            try command.validate?(parsed)
            return try run(parsed)
        } catch let error as UsageError {
            // One prefix for every error of every tool: `<tool>: error: [<subcommand path>: ]<what>`.
            let context = path.count > 1 ? path.dropFirst().joined(separator: " ") + ": " : ""
            printError("\(root.name): error: \(context)\(error.message)")
            printError("See '\(path.joined(separator: " ")) --help'.")
            return ExitCode.usage
        } catch {
            return errorHandler(error)
        }
    }

    /// Parses `arguments`; nil means help was asked for.
    public static func parse(_ arguments: [String], for command: Command) throws -> Arguments? {
        var result = Arguments()
        result.declared = Set(command.options.map { "--\($0.name)" } + command.positionals.map { "<\($0.name)>" })
        var loose: [String] = []
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                loose.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            if argument == "--help" || argument == "-h" { return nil }
            let (name, inline) = split(argument)
            guard let option = find(name, in: command) else {
                let names = command.options.map { "--\($0.name)" } + ["--help"] + (command.subcommands.isEmpty ? [] : ["--version"])
                // Anything not shaped like an option name (`--` and at most 40 lowercase letters, digits and dashes,
                // or `-x`) may be a value that begins with '-', such as a token: never echoed whole.
                let shown = Self.isOptionShaped(name) ? name : "\(name.prefix(3))… (a value that begins with '-' goes after '--')"
                throw UsageError("unknown option \(shown)" + Suggestion.didYouMean(name, among: names, quoted: false))
            }
            if option.isFlag {
                guard inline == nil else { throw UsageError("--\(option.name) takes no value") }
                result.flags.insert(option.name)
                continue
            }
            let value: String
            if let inline {
                value = inline
            } else {
                guard index < arguments.count else { throw UsageError("--\(option.name) needs a value \(option.valueName!)") }
                value = arguments[index]
                index += 1
            }
            if !option.repeating, result.values[option.name] != nil {
                throw UsageError("--\(option.name) given more than once")
            }
            result.values[option.name, default: []].append(value)
            if let convert = option.convert { result.converted[option.name, default: []].append(try convert(value)) }
        }
        for positional in command.positionals {
            if loose.isEmpty {
                if !positional.optional { throw UsageError("missing <\(positional.name)>") }
                continue
            }
            result.positionals[positional.name] = positional.variadic ? loose : [loose.removeFirst()]
            if positional.variadic { loose = [] }
        }
        if let extra = loose.first {
            if command.subcommands.isEmpty { throw UsageError("unexpected argument \"\(extra)\"") }
            throw unknownCommand(extra, in: command)
        }
        if let missing = command.options.first(where: { $0.missing != nil && result.values[$0.name] == nil })?.missing {
            throw UsageError(missing)
        }
        return result
    }

    private static func unknownCommand(_ name: String, in command: Command) -> UsageError {
        UsageError("unknown command \"\(name)\"" + Suggestion.didYouMean(name, among: command.subcommands.map(\.name) + ["help"]))
    }

    /// `--` and 1–40 of `a-z`, `0-9`, `-`; or a dash and one character: what an option name can look like.
    static func isOptionShaped(_ name: String) -> Bool {
        if name.count <= 2 { return true }
        guard name.hasPrefix("--") else { return false }
        let rest = name.utf8.dropFirst(2)
        return rest.count <= 40 && rest.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }

    private static func split(_ argument: String) -> (String, String?) {
        if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
            return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
        }
        return (argument, nil)
    }

    private static func find(_ name: String, in command: Command) -> Option? {
        if name.hasPrefix("--") { return command.options.first { "--\($0.name)" == name } }
        return command.options.first { $0.short.map { "-\($0)" } == name }
    }

    /// The `--help` text, generated from the declarations.
    public static func help(for command: Command, path: [String]) -> String {
        var usage = "USAGE: " + path.joined(separator: " ")
        if !command.subcommands.isEmpty { usage += " <subcommand>" }
        if !command.options.isEmpty { usage += " [options]" }
        for positional in command.positionals {
            let name = "<\(positional.name)>" + (positional.variadic ? " ..." : "")
            usage += positional.optional ? " [\(name)]" : " \(name)"
        }
        var lines = ["OVERVIEW: \(command.abstract)", "", usage]
        if !command.discussion.isEmpty { lines += ["", command.discussion] }
        if !command.examples.isEmpty {
            lines += ["", "EXAMPLES:"]
            lines += command.examples.map { "  " + $0 }
        }
        if !command.positionals.isEmpty {
            lines += ["", "ARGUMENTS:"]
            lines += command.positionals.map { row("<\($0.name)>", $0.help) }
        }
        let isRoot = path.count == 1
        if !command.options.isEmpty || command.run != nil || isRoot {
            lines += ["", "OPTIONS:"]
            for option in command.options {
                var label = option.short.map { "-\($0), " } ?? ""
                label += "--\(option.name)" + (option.valueName.map { " \($0)" } ?? "")
                lines.append(row(label, option.help))
            }
            lines.append(row("-h, --help", "Show help information."))
            if isRoot { lines.append(row("--version", "Show the version (\(ToolVersion.current)).")) }
        }
        if !command.subcommands.isEmpty {
            lines += ["", "SUBCOMMANDS:"]
            lines += command.subcommands.map { row($0.name, $0.abstract) }
            lines += ["", "  See '\(path.joined(separator: " ")) help <subcommand>' for detailed help."]
        }
        return lines.joined(separator: "\n")
    }

    private static func row(_ label: String, _ help: String) -> String {
        let padded = label.count < 28 ? label + String(repeating: " ", count: 28 - label.count) : label + "  "
        return "  " + padded + help
    }
}
