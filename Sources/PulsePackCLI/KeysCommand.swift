import Foundation
import PulseAge
import PulseCommandLine
import PulseCore
import PulsePack
import PulseStore

/// `pulse-pack keys …`: make the key server's identity, seal key tables to it, open sealed files.
/// Exit codes: 0 success, 64 usage, 65 bad input (wrong identity, damaged or non-age file, bad
/// recipient, not a key table), 1 anything else (unreadable file, full disk). Each failure prints one
/// line on stderr; no secret is ever printed.
public enum KeysCommand {
    /// The `keys` command tree, printing to the process's stdout and stderr.
    public static let command: Command = make(console: .standard())

    static let keygenOut = Option.value("out", "<file>", short: "o", help: "Identity file to create (never overwritten), or - for standard output.")
        .required("missing --out <file>: the identity is a secret and is only written where you say (--out - for standard output)")
    static let sealTo = Option.values("to", "<age1…>", short: "r", help: "Recipient (the key server's public key); repeatable.")
    static let sealOut = Option.value("out", "<file>", short: "o", help: "Output file for a single table (\"-\" for stdout).")
    static let sealInput = Positional.one("key-table-or-package", help: "A key table JSON file, a package folder or its server/ folder.")
    static let openIdentity = Option.values("identity", "<file>", short: "i", help: "Identity file (as keygen or age-keygen writes); repeatable.")
    static let openOut = Option.value("out", "<file>", short: "o", help: "Output file, 0600 (\"-\" for stdout); default: the input without .age.")
    static let openInput = Positional.one("file", help: "The age file to open.")

    /// The command tree printing to `console`.
    public static func make(console: Console) -> Command {
        Command(
            name: "keys",
            abstract: "Seal key tables to the key server (age format) and open sealed files.",
            discussion: "Sealed files are standard age files: the key server opens them with `age -d -i <identity>`.\nSee docs/key-handoff.md.",
            examples: ["pulse-pack keys keygen --out key-server.identity", "pulse-pack keys seal pkg --to age1…"],
            subcommands: [keygen(console), seal(console), open(console)])
    }

    static func keygen(_ console: Console) -> Command {
        Command(
            name: "keygen",
            abstract: "Create an age identity (0600 file) and print its recipient.",
            discussion: """
                Run this on the key server. The identity never leaves it; give the printed age1… recipient to whoever \
                builds packages. With --out -, the identity goes to standard output (for a secret store that reads \
                it there, as age-keygen does) and the recipient to standard error.
                """,
            examples: [
                "pulse-pack keys keygen --out /etc/pulse/key-server.identity   # prints age1…",
                "pulse-pack keys keygen --out - | vault kv put secret/pulse identity=-",
            ],
            options: [keygenOut],
            run: guarded("keygen", console) { arguments in
                let out = arguments[Self.keygenOut]
                let identity = try AgeIdentity.generate()
                if out == "-" {
                    try console.write(Array(identity.fileContents().utf8))
                    console.err("public key: \(identity.recipient.description)")
                    return ExitCode.success
                }
                try KeyFiles.create(Array(identity.fileContents().utf8), at: URL(fileURLWithPath: out), mode: 0o600)
                console.out(identity.recipient.description)
                return ExitCode.success
            })
    }

    static func seal(_ console: Console) -> Command {
        Command(
            name: "seal",
            abstract: "Seal a key table, or every key table of a package, to age recipients.",
            discussion: """
                Given a package folder (or its server/ part), seals each server/keys/<sessionId>/<deckVersion>.json to \
                server/keys/<sessionId>/<deckVersion>.json.age (0600). Given a file, writes <file>.age or --out. \
                The plaintext tables are left in place: delete them once the key server has opened the sealed ones.
                """,
            examples: [
                "pulse-pack keys seal pkg --to age1…                                  # every table of the package",
                "pulse-pack keys seal pkg/server/keys/keynote/3.json --to age1… --out -",
            ],
            options: [sealTo, sealOut],
            positionals: [sealInput],
            validate: { arguments in
                guard !arguments[Self.sealTo].isEmpty else { throw UsageError("missing --to <age1…> (the key server's recipient)") }
                var isFolder: ObjCBool = false
                if arguments[Self.sealOut] != nil, FileManager.default.fileExists(atPath: arguments[Self.sealInput], isDirectory: &isFolder),
                    isFolder.boolValue
                {
                    throw UsageError("--out applies to a single key table, not a package")
                }
            },
            run: guarded("seal", console) { arguments in
                let recipients = try SealedKeyTable.recipients(arguments[Self.sealTo])
                let input = URL(fileURLWithPath: arguments[Self.sealInput])
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: input.path, isDirectory: &isFolder) else {
                    throw KeysFailure(input.path, "no such file or folder", code: ExitCode.failure)
                }
                if isFolder.boolValue {
                    let written = try sealPackage(input, to: recipients)
                    for url in written { console.out(url.path) }
                    return ExitCode.success
                }
                let bytes = try KeyFiles.read(input, limit: AgeLimits.maxFileByteCount, what: "a key table")
                _ = try SealedKeyTable.decode(bytes, name: input.path)
                let sealed = try Age.encrypt(bytes, to: recipients)
                let out = arguments[Self.sealOut] ?? input.path + "." + SealedKeyTable.fileExtension
                if out == "-" {
                    try console.write(sealed)
                } else {
                    try KeyFiles.write(sealed, to: URL(fileURLWithPath: out))
                    console.out(out)
                }
                return ExitCode.success
            })
    }

    static func open(_ console: Console) -> Command {
        Command(
            name: "open",
            abstract: "Decrypt an age file with an identity file.",
            examples: ["pulse-pack keys open pkg/server/keys/keynote/3.json.age -i key-server.identity --out -"],
            options: [openIdentity, openOut],
            positionals: [openInput],
            validate: { arguments in
                guard !arguments[Self.openIdentity].isEmpty else { throw UsageError("missing --identity <file>") }
                let input = URL(fileURLWithPath: arguments[Self.openInput]).path, suffix = "." + SealedKeyTable.fileExtension
                guard arguments[Self.openOut] != nil || (input.hasSuffix(suffix) && input.count > suffix.count) else {
                    throw UsageError("give --out <file> (or --out -): the input does not end in \(suffix)")
                }
            },
            run: guarded("open", console) { arguments in
                let identityFiles = arguments[Self.openIdentity]
                let input = URL(fileURLWithPath: arguments[Self.openInput])
                let suffix = "." + SealedKeyTable.fileExtension
                let out: String
                if let given = arguments[Self.openOut] {
                    out = given
                } else {
                    out = String(input.path.dropLast(suffix.count))
                    guard !FileManager.default.fileExists(atPath: out) else {
                        throw KeysFailure(out, "exists; give --out to replace it", code: ExitCode.failure)
                    }
                }
                var identities: [AgeIdentity] = []
                for path in identityFiles {
                    let bytes = try KeyFiles.read(URL(fileURLWithPath: path), limit: AgeLimits.maxIdentityFileByteCount, what: "an identity file")
                    let text = String(decoding: bytes, as: UTF8.self)
                    do throws(AgeError) { identities += try AgeIdentity.parseFile(text, name: "identity file") } catch {
                        throw KeysFailure(path, error.description, code: ExitCode.dataError)
                    }
                }
                let plaintext: [UInt8]
                let sealed = try KeyFiles.read(input, limit: AgeLimits.maxFileByteCount, what: "an age file")
                do { plaintext = try Age.decrypt(sealed, identities: identities) } catch let error as AgeError {
                    throw KeysFailure(input.path, error.description, code: ExitCode.dataError)
                }
                if out == "-" {
                    try console.write(plaintext)
                } else {
                    try KeyFiles.write(plaintext, to: URL(fileURLWithPath: out))
                    console.out(out)
                }
                return ExitCode.success
            })
    }

    /// The key table folder of a package (`server/keys`), of a copied server part (`keys`), else nil.
    static func keysFolder(of folder: URL) -> URL? {
        let candidates = [PulsePackage(root: folder).keysFolder, folder.appendingPathComponent("keys")]
        return candidates.first { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// Seals every `server/keys/<sessionId>/<deckVersion>.json` of a package next to itself.
    static func sealPackage(_ folder: URL, to recipients: [AgeRecipient]) throws -> [URL] {
        let manager = FileManager.default
        guard let keys = keysFolder(of: folder), let sessions = try? manager.contentsOfDirectory(atPath: keys.path) else {
            throw KeysFailure(folder.path, "has no server/keys/ folder: not a package with key tables", code: ExitCode.dataError)
        }
        var written: [URL] = []
        for session in sessions.sorted() where !session.hasPrefix(".") {
            let folder = keys.appendingPathComponent(session)
            let names = (try? manager.contentsOfDirectory(atPath: folder.path)) ?? []
            for name in names.sorted() where name.hasSuffix(".json") && !name.hasPrefix(".") {
                let url = folder.appendingPathComponent(name)
                let bytes = try KeyFiles.read(url, limit: AgeLimits.maxFileByteCount, what: "a key table")
                _ = try SealedKeyTable.decode(bytes, name: url.path)
                let target = url.appendingPathExtension(SealedKeyTable.fileExtension)
                try KeyFiles.write(try Age.encrypt(bytes, to: recipients), to: target)
                written.append(target)
            }
        }
        guard !written.isEmpty else {
            throw KeysFailure(keys.path, "holds no key tables (<sessionId>/<deckVersion>.json)", code: ExitCode.dataError)
        }
        return written
    }

    /// Runs `body`, turning failures into one line on stderr and an exit code; usage errors go on to
    /// CommandLineTool (exit 64).
    static func guarded(
        _ name: String, _ console: Console, _ body: @escaping @Sendable (Arguments) throws -> Int32
    ) -> @Sendable (Arguments) throws -> Int32 {
        { arguments in
            // The one error prefix of every tool (`pulse-pack: error:`), then the command.
            let prefix = "pulse-pack: error: keys \(name): "
            do {
                return try body(arguments)
            } catch let error as UsageError {
                throw error
            } catch let error as KeysFailure {
                console.err(prefix + "\(error.path): \(error.message)")
                return error.code
            } catch let error as AgeError {
                console.err(prefix + error.description)
                return ExitCode.dataError
            } catch let error as InputError {
                console.err(prefix + error.description)
                return ExitCode.dataError
            } catch {
                console.err(prefix + "\(error)")
                return ExitCode.failure
            }
        }
    }
}

/// A failure tied to one file, with the exit code it deserves.
struct KeysFailure: Error {
    var path: String
    var message: String
    var code: Int32

    init(_ path: String, _ message: String, code: Int32) {
        self.path = path
        self.message = message
        self.code = code
    }
}
