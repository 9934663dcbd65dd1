import Foundation
import PulseCommandLine
import PulseCore
import PulseStore
import PulseTestSupport
import SyncTestSupport
import Synchronization
import Testing
@testable import PulseAge
@testable import PulsePack
@testable import PulsePackCLI

/// `pulse-pack keys …` end to end, in process, with the reference age tool on the other side.
@Suite struct KeysCommandTests {
    final class Captured: Sendable {
        let out = Mutex<[String]>([])
        let err = Mutex<[String]>([])
        let bytes = Mutex<[UInt8]>([])

        var console: Console {
            Console(
                out: { line in self.out.withLock { $0.append(line) } },
                err: { line in self.err.withLock { $0.append(line) } },
                write: { data in self.bytes.withLock { $0 += data } })
        }
    }

    struct Run {
        var code: Int32
        var out: [String]
        var err: [String]
        var bytes: [UInt8]
    }

    func keys(_ arguments: String...) -> Run {
        let captured = Captured()
        let code = CommandLineTool.main(
            KeysCommand.make(console: captured.console), arguments: arguments,
            errorHandler: { error in captured.err.withLock { $0.append("unhandled: \(error)") }; return 99 },
            print: { line in captured.out.withLock { $0.append(line) } },
            printError: { line in captured.err.withLock { $0.append(line) } })
        return Run(code: code, out: captured.out.withLock { $0 }, err: captured.err.withLock { $0 }, bytes: captured.bytes.withLock { $0 })
    }

    static let table = KeyTable(
        sessionId: "keynote", deckVersion: 2, packageVersion: String(repeating: "ab", count: 32),
        slides: [KeyTable.Slide(n: 1, assetHash: Digest(hex: String(repeating: "cd", count: 32))!,
                                keyB64: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", nonceB64: "AAECAwQFBgcICQoL")])

    /// An identity from our keygen, its recipient, and the temp folder holding it.
    func keygen(_ folder: TestFolder) throws -> (file: String, recipient: String) {
        let file = folder.path("server-identity.txt")
        let run = keys("keygen", "--out", file)
        try #require(run.code == 0, "\(run.err)")
        try #require(run.out.count == 1)
        return (file, run.out[0])
    }

    @Test func helpIsGeneratedFromTheDeclarations() {
        #expect(KeysCommand.command.name == "keys")
        #expect(KeysCommand.command.subcommands.map(\.name) == ["keygen", "seal", "open"])
        for sub in ["keygen", "seal", "open"] {
            let run = keys(sub, "--help")
            #expect(run.code == 0)
            #expect(run.out.joined(separator: "\n").contains("USAGE: keys \(sub)"))
        }
        #expect(keys("seal", "--help").out.joined().contains("--to <age1…>"))
        #expect(keys("open", "--help").out.joined().contains("--identity <file>"))
    }

    @Test func keygenWritesPrivateIdentityAndPrintsRecipient() throws {
        try AgeTool.requireInstalled()
        let folder = try TestFolder()
        let (file, recipient) = try keygen(folder)
        #expect(recipient.hasPrefix("age1"))
        #expect(try permissions(file) == 0o600)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains("# public key: \(recipient)\n"))
        // The secret is in the file and nowhere in what was printed.
        let secret = try #require(text.split(separator: "\n").first { $0.hasPrefix("AGE-SECRET-KEY-1") })
        #expect(!recipient.contains(secret))
        let shown = try AgeTool.run(AgeTool.ageKeygen, ["-y", file])
        #expect(String(decoding: shown.stdout, as: UTF8.self) == recipient + "\n")
        // Never overwritten.
        let again = keys("keygen", "--out", file)
        #expect(again.code == 1)
        #expect(again.err.count == 1 && again.err[0].contains("refusing to overwrite"), "\(again.err)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == text)
        // No --out: the secret is not printed instead.
        let noOut = keys("keygen")
        #expect(noOut.code == 64)
        #expect(!noOut.out.joined().contains("AGE-SECRET-KEY"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["server-identity.txt"])
    }

    /// `--out -` writes the identity to standard output, never a file named "-".
    @Test func keygenToStandardOutput() throws {
        let dash = FileManager.default.currentDirectoryPath + "/-"
        #expect(!FileManager.default.fileExists(atPath: dash))
        let run = keys("keygen", "--out", "-")
        #expect(run.code == 0, "\(run.err)")
        let text = String(decoding: run.bytes, as: UTF8.self)
        #expect(text.contains("\nAGE-SECRET-KEY-1"))
        #expect(run.out.isEmpty)
        #expect(run.err.count == 1 && run.err[0].hasPrefix("public key: age1") && text.contains("# public key: \(run.err[0].dropFirst(12))\n"))
        #expect(!FileManager.default.fileExists(atPath: dash))
        try? FileManager.default.removeItem(atPath: dash)
    }

    @Test func sealFileOpensWithAgeAndWithOpen() throws {
        try AgeTool.requireInstalled()
        let folder = try TestFolder()
        let (identity, recipient) = try keygen(folder)
        let tableFile = folder.path("2.json")
        let tableBytes = try SealedKeyTable.encode(Self.table)
        try Data(tableBytes).write(to: URL(fileURLWithPath: tableFile))
        let sealed = keys("seal", tableFile, "--to", recipient)
        #expect(sealed.code == 0, "\(sealed.err)")
        #expect(sealed.out == [tableFile + ".age"])
        #expect(try permissions(tableFile + ".age") == 0o600)
        let sealedBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: tableFile + ".age")))
        #expect(sealedBytes.starts(with: Array("age-encryption.org/v1\n".utf8)))
        let byAge = try AgeTool.run(AgeTool.age, ["-d", "-i", identity, tableFile + ".age"])
        #expect(byAge.status == 0 && byAge.stdout == tableBytes, "\(byAge.stderr)")
        // open: default output is the name without .age, which exists here, so it refuses.
        let refused = keys("open", tableFile + ".age", "--identity", identity)
        #expect(refused.code == 1 && refused.err.count == 1, "\(refused.err)")
        let opened = keys("open", tableFile + ".age", "--identity", identity, "--out", folder.path("opened.json"))
        #expect(opened.code == 0, "\(opened.err)")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder.path("opened.json")))) == tableBytes)
        #expect(try permissions(folder.path("opened.json")) == 0o600)
        let toStdout = keys("open", tableFile + ".age", "-i", identity, "--out", "-")
        #expect(toStdout.code == 0 && toStdout.bytes == tableBytes)
    }

    @Test func openReadsWhatAgeSealed() throws {
        try AgeTool.requireInstalled()
        let folder = try TestFolder()
        let identity = folder.path("age-id.txt")
        #expect(try AgeTool.run(AgeTool.ageKeygen, ["-o", identity]).status == 0)
        let recipient = String(decoding: try AgeTool.run(AgeTool.ageKeygen, ["-y", identity]).stdout, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let tableBytes = try SealedKeyTable.encode(Self.table)
        let sealed = try AgeTool.run(AgeTool.age, ["-r", recipient, "-o", folder.path("t.json.age")], stdin: tableBytes)
        try #require(sealed.status == 0, "\(sealed.stderr)")
        let opened = keys("open", folder.path("t.json.age"), "--identity", identity)
        #expect(opened.code == 0, "\(opened.err)")
        #expect(opened.out == [folder.path("t.json")])
        let table = try SealedKeyTable.open(
            try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder.path("t.json.age")))),
            identities: AgeIdentity.parseFile(String(contentsOfFile: identity, encoding: .utf8)))
        #expect(table == Self.table)
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder.path("t.json")))) == tableBytes)
    }

    @Test func sealPackageSealsEveryKeyTable() throws {
        try AgeTool.requireInstalled()
        let folder = try TestFolder()
        let (identity, recipient) = try keygen(folder)
        let package = PulsePackage(root: folder.url.appendingPathComponent("pkg"))
        var second = Self.table
        second.sessionId = "workshop"
        second.deckVersion = 7
        try package.writeKeyTable(Self.table)
        try package.writeKeyTable(second)
        let run = keys("seal", package.root.path, "--to", recipient)
        #expect(run.code == 0, "\(run.err)")
        let expected = [Self.table, second].map { SealedKeyTable.url(in: package, sessionId: $0.sessionId, deckVersion: $0.deckVersion) }
        #expect(run.out == expected.map(\.path))
        for (table, url) in zip([Self.table, second], expected) {
            #expect(url.path.hasSuffix("keys/\(table.sessionId)/\(table.deckVersion).json.age"))
            #expect(try permissions(url.path) == 0o600)
            let byAge = try AgeTool.run(AgeTool.age, ["-d", "-i", identity, url.path])
            let plaintext = try Data(contentsOf: package.keyTableURL(sessionId: table.sessionId, deckVersion: table.deckVersion))
            #expect(byAge.status == 0 && byAge.stdout == Array(plaintext), "\(byAge.stderr)")
        }
        #expect(keys("seal", folder.path("pkg"), "--to", recipient, "--out", "x").code == 64)
        let empty = PulsePackage(root: folder.url.appendingPathComponent("empty"))
        try AtomicFile.makeFolder(empty.keysFolder)
        #expect(keys("seal", empty.root.path, "--to", recipient).code == 65)
    }

    @Test func buildPathWritesOnlyTheSealedTable() throws {
        try AgeTool.requireInstalled()
        let folder = try TestFolder()
        let (identity, recipient) = try keygen(folder)
        let package = PulsePackage(root: folder.url.appendingPathComponent("pkg"))
        let recipients = try SealedKeyTable.recipients([recipient])
        let url = try SealedKeyTable.write(Self.table, sealedTo: recipients, in: package)
        #expect(url == SealedKeyTable.url(in: package, sessionId: "keynote", deckVersion: 2))
        #expect(!FileManager.default.fileExists(atPath: package.keyTableURL(sessionId: "keynote", deckVersion: 2).path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path) == ["2.json.age"])
        #expect(try permissions(url.path) == 0o600)
        #expect(try permissions(url.deletingLastPathComponent().path) == 0o700)
        #expect(try permissions(package.keysFolder.path) == 0o700)
        let byAge = try AgeTool.run(AgeTool.age, ["-d", "-i", identity, url.path])
        try package.writeKeyTable(Self.table) // same bytes as the plaintext path would have written
        #expect(byAge.stdout == Array(try Data(contentsOf: package.keyTableURL(sessionId: "keynote", deckVersion: 2))))
        #expect(throws: AgeError.self) { try SealedKeyTable.recipients(["age1nope"]) }
        #expect(throws: AgeError.missing("no recipient given")) { try SealedKeyTable.recipients([]) }
    }

    @Test func badInputGetsOneLineAndExit65() throws {
        try AgeTool.requireInstalled()
        let folder = try TestFolder()
        let (identity, recipient) = try keygen(folder)
        let tableFile = folder.path("t.json")
        try Data(try SealedKeyTable.encode(Self.table)).write(to: URL(fileURLWithPath: tableFile))
        #expect(keys("seal", tableFile, "--to", recipient).code == 0)
        let sealed = try [UInt8](Data(contentsOf: URL(fileURLWithPath: tableFile + ".age")))
        let other = folder.path("other.txt")
        #expect(keys("keygen", "-o", other).code == 0)
        let secrets = try [identity, other].map { try String(contentsOfFile: $0, encoding: .utf8) }
            .flatMap { $0.split(separator: "\n").filter { $0.hasPrefix("AGE-SECRET-KEY-1") } }
        func write(_ name: String, _ bytes: [UInt8]) throws -> String {
            try Data(bytes).write(to: URL(fileURLWithPath: folder.path(name)))
            return folder.path(name)
        }
        var badIdentity = try String(contentsOfFile: identity, encoding: .utf8)
        badIdentity = badIdentity.replacingOccurrences(of: "AGE-SECRET-KEY-1Q", with: "AGE-SECRET-KEY-1P")
            .replacingOccurrences(of: "AGE-SECRET-KEY-1", with: "AGE-SECRET-KEY-1X")
        let cases: [(String, Run)] = [
            ("wrong identity", keys("open", tableFile + ".age", "-i", other, "-o", "-")),
            ("truncated", keys("open", try write("short.age", Array(sealed.dropLast(5))), "-i", identity, "-o", "-")),
            ("damaged", keys("open", try write("flip.age", sealed.enumerated().map { $0 == sealed.count - 20 ? $1 ^ 1 : $1 }), "-i", identity, "-o", "-")),
            ("not age", keys("open", tableFile, "-i", identity, "-o", "-")),
            ("bad recipient", keys("seal", tableFile, "--to", "age1qqqqqqqqqqqqqqqqqqqqqqqqqqqqq")),
            ("identity as recipient", keys("seal", tableFile, "--to", String(secrets[0]))),
            ("lowercase identity as recipient", keys("seal", tableFile, "--to", secrets[0].lowercased())),
            ("not a key table", keys("seal", try write("x.json", Array("{\"a\":1}".utf8)), "--to", recipient)),
            ("bad identity file", keys("open", tableFile + ".age", "-i", try write("bad-id.txt", Array(badIdentity.utf8)), "-o", "-")),
            ("recipient as identity", keys("open", tableFile + ".age", "-i", try write("r.txt", Array(recipient.utf8)), "-o", "-")),
        ]
        for (name, run) in cases {
            #expect(run.code == 65, "\(name): \(run.err)")
            #expect(run.err.count == 1, "\(name): \(run.err)")
            #expect(run.bytes.isEmpty && run.out.isEmpty, "\(name)")
            for line in run.err {
                #expect(!line.contains("\n"), "\(name)")
                for secret in secrets {
                    #expect(!line.lowercased().contains(secret.dropFirst(16).prefix(20).lowercased()), "\(name) leaks a secret")
                }
            }
        }
        #expect(keys("seal", "/nonexistent/t.json", "--to", recipient).code == 1)
        #expect(keys("open", "/nonexistent/t.json.age", "-i", identity).code == 1)
        #expect(keys("open", tableFile + ".age", "-i", "/nonexistent/id").code == 1)
        #expect(keys("seal", tableFile).code == 64)
        #expect(keys("open", tableFile + ".age").code == 64)
        #expect(keys("open", tableFile, "-i", identity).code == 64) // no .age suffix and no --out
        #expect(keys("frobnicate").code == 64)
    }
}
