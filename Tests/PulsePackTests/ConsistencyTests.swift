import Foundation
import PulseCommandLine
import PulseCore
import PulseStore
import PulseTestSupport
import Testing

@testable import PulsePack
@testable import PulsePackCLI

/// The same conventions in every command (issue 11, item 9): --version, examples in --help, one error
/// prefix, system words instead of Foundation's, 65 for what is not a package, pasteable hints.
struct ConsistencyTests {
    @Test func everyExecutableHasVersion() throws {
        #expect(Support.cli(["--version"]).out == ["pulse-pack \(ToolVersion.current)"])
        let folder = Support.binary.deletingLastPathComponent()
        for (program, name) in [("pulse-pack", "pulse-pack"), ("pulse-pack-ops", "pulse-pack"), ("pulse-origin", "pulse-origin")] {
            let result = try Support.executable(["--version"], program: folder.appendingPathComponent(program))
            #expect(result.code == 0 && result.out == ["\(name) \(ToolVersion.current)"], "\(program): \(result)")
        }
    }

    @Test func everyPulsePackHelpHasExamples() {
        for command in [[], ["build"], ["verify"], ["diff"], ["keys"], ["keys", "keygen"], ["keys", "seal"], ["keys", "open"]] {
            let help = Support.cli(command + ["--help"])
            #expect(help.code == 0)
            #expect(help.out.joined(separator: "\n").contains("EXAMPLES:\n  pulse-pack "), "pulse-pack \(command.joined(separator: " ")) --help")
        }
    }

    @Test func oneErrorPrefix() throws {
        let usage = Support.cli(["build", "x.json"])
        #expect(usage.code == 64)
        #expect(usage.err.first == "pulse-pack: error: build: missing --out <dir>")
        let temporary = try TestFolder()
        let folder = temporary.url
        let keys = Support.cli(["keys", "open", folder.appendingPathComponent("nothing.age").path, "-i", folder.appendingPathComponent("none").path])
        #expect(keys.err.count == 1 && keys.err[0].hasPrefix("pulse-pack: error: keys open: "), "\(keys.err)")
        let typo = Support.cli(["biuld"])
        #expect(typo.err.first == #"pulse-pack: error: unknown command "biuld"; did you mean "build"?"#)
        let flag = Support.cli(["build", "x.json", "--output", "o"])
        #expect(flag.err.first == "pulse-pack: error: build: unknown option --output; did you mean --out?")
    }

    @Test func verifyOfSomethingThatIsNotAPackageExits65() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let result = Support.cli(["verify", folder.path])
        #expect(result.code == 65)
        #expect(result.err == ["pulse-pack: error: \(folder.path): not a pulse package (no server/index.json)"])
        let json = Support.cli(["verify", folder.path, "--json"])
        #expect(json.code == 65)
        #expect(try JSONValue.parse(Array(json.out.joined(separator: "\n").utf8))["ok"] == false)
    }

    @Test func hintsQuotePathsWithSpaces() throws {
        let temporary = try TestFolder()
        let folder = temporary.url.appendingPathComponent("My Talks")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let session = try Support.sessionFile(in: folder, deck: Support.fixtures.appendingPathComponent("pdf/three-pages.pdf"))
        let out = folder.appendingPathComponent("pkg")
        let result = Support.cli(["build", session.path, "--out", out.path])
        #expect(result.code == 0, "\(result.err)")
        #expect(result.out.contains("            pulse-pack verify '\(out.path)'"), "\(result.out)")
        #expect(result.out.contains { $0.hasPrefix("Look at it: cat '\(out.path)/server/sessions/talk/") && $0.hasSuffix(".json'") }, "\(result.out)")
        #expect(ShellQuoting.quote("it's") == #"'it'\''s'"#)
        #expect(ShellQuoting.quote("/tmp/plain-path_1.json") == "/tmp/plain-path_1.json")
    }

    /// `--json` of build, verify and diff: indented, keys sorted (the canonical pretty form).
    @Test func jsonIsPrintedOneWay() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let session = try Support.sessionFile(in: folder, deck: Support.fixtures.appendingPathComponent("pdf/three-pages.pdf"))
        let out = folder.appendingPathComponent("pkg")
        for arguments in [["build", session.path, "--out", out.path, "--json"], ["verify", out.path, "--json"]] {
            let printed = Support.cli(arguments).out.joined(separator: "\n")
            let value = try JSONValue.parse(Array(printed.utf8))
            #expect(Array((printed + "\n").utf8) == value.prettyBytes, "\(arguments[0])")
        }
    }
}

extension ConsistencyTests {
    /// A Foundation error that reaches the CLI unwrapped still names its file and the system's reason.
    @Test func anUnwrappedFoundationErrorNamesItsFile() {
        let error = CocoaError(.fileWriteVolumeReadOnly, userInfo: [NSFilePathErrorKey: "/mnt/usb/pkg"])
        #expect(PulsePackCLI.describe(error) == "/mnt/usb/pkg: Read-only file system")
        #expect(PulsePackCLI.describe(InputError(file: "a.json", "x")) == "a.json: x")
    }

    /// A damaged index names the line and column, like an input file.
    @Test func aDamagedIndexGivesItsPosition() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let session = try Support.sessionFile(in: folder, deck: Support.fixtures.appendingPathComponent("pdf/three-pages.pdf"))
        let out = folder.appendingPathComponent("pkg")
        try Support.build(session, out: out)
        let index = out.appendingPathComponent("server/index.json")
        var text = try String(contentsOf: index, encoding: .utf8)
        text = text.replacingOccurrences(of: "  \"format\": ", with: "  \"format\": 1,\n  \"format\": ")
        try Data(text.utf8).write(to: index)
        let first = try #require(text.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains("\"format\"") }) + 1
        let result = Support.cli(["diff", out.path, "talk"])
        #expect(result.code == 65)
        #expect(result.err == [#"pulse-pack: error: \#(index.path):\#(first + 1):3: not valid JSON: duplicate field "format" (first at line \#(first), column 3)"#], "\(result.err)")
    }
}

extension ConsistencyTests {
    /// verify reports its progress (drawn as a bar on a terminal only): every blob and every slide.
    @Test func verifyReportsProgress() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let session = try Support.sessionFile(in: folder, deck: Support.fixtures.appendingPathComponent("pdf/three-pages.pdf"))
        let out = folder.appendingPathComponent("pkg")
        try Support.build(session, out: out)
        final class Steps: @unchecked Sendable { var seen: [String: (done: Int, total: Int)] = [:] }
        let steps = Steps()
        var verifier = Verifier(package: out, keys: nil, environment: Support.environment)
        verifier.progress = { step, done, total in steps.seen[step] = (done, total) }
        let report = verifier.run()
        #expect(report.problems.isEmpty, "\(report.problems)")
        let blobs = try #require(steps.seen["  re-hashing blobs"])
        #expect(blobs.done == blobs.total && blobs.total == report.blobs)
        let slides = try #require(steps.seen["  decrypting talk"])
        #expect(slides.done == 3 && slides.total == 3)
    }
}
