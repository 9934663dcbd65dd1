import Foundation
import PulseAge
import PulseCommandLine
import PulseCore
import PulsePack

/// `pulse-pack verify`.
enum VerifyCommand {
    static let keys = Option.value("keys", "<file-or-dir>", help: "Key table(s) to decrypt slides with (default: <package>/server/keys).")
    static let identity = Option.values("identity", "<file>", short: "i", help: "age identity file to open sealed key tables with.")
    static let json = Option.flag("json", help: "Print a machine-readable report on stdout.")
    static let package = Positional.one("package", help: "The package folder.")

    static func command(console: Console, environment: [String: String]) -> Command {
        Command(
            name: "verify",
            abstract: "Check a package: re-hash every blob, check every blob list and manifest, decrypt every slide.",
            discussion: """
                Checks both parts: public/ (every blob, every blob list against its name and its manifest, nothing \
                device-scoped there) and server/ (every manifest, gated resources, key tables: every slide is \
                decrypted), and that the package secret is not in the folder. Reports every problem found, not \
                only the first, and exits 1 if there is any; a folder that is not a package exits 65. On a terminal \
                it shows its progress. --json: docs/json-output.md.
                """,
            examples: [
                "pulse-pack verify pkg",
                "pulse-pack verify pkg --identity key-server.identity     # also decrypt sealed key tables",
                "pulse-pack verify pkg --json",
            ],
            options: [keys, identity, json],
            positionals: [package],
            run: { arguments in
                let identities = try arguments[Self.identity].flatMap { path in
                    try AgeIdentity.parseFile(String(decoding: try InputLoader.readFile(fileURL(path)), as: UTF8.self), name: path)
                }
                let json = arguments[Self.json]
                let package = fileURL(arguments[Self.package])
                var verifier = Verifier(package: package, keys: arguments[Self.keys].map(fileURL), identities: identities, environment: environment)
                let bar = ProgressBar(console)
                if !json { verifier.progress = { step, done, total in bar.update(step, done: done, total: total) } }
                let report = verifier.run()
                console.clearProgress()
                if !report.isPackage, !json {
                    // Like push and gc: not a package is bad input (65), not a problem found in a package (1).
                    let problem = report.problems.first ?? "not a pulse package"
                    throw InputError(file: package.path, problem.hasPrefix(package.path + ": ") ? String(problem.dropFirst(package.path.count + 2)) : problem)
                }
                if json {
                    let output: JSONValue = [
                        "ok": .bool(report.problems.isEmpty), "problems": .array(report.problems.map(JSONValue.string)),
                        "notes": .array(report.notes.map(JSONValue.string)), "blobs": .int(report.blobs),
                        "manifests": .int(report.manifests), "slidesDecrypted": .int(report.slidesDecrypted),
                    ]
                    console.out(json: output)
                    if !report.isPackage { return ExitCode.dataError }
                } else {
                    for problem in report.problems { console.err("pulse-pack: problem: \(problem)") }
                    for note in report.notes { console.err("pulse-pack: note: \(note)") }
                    console.out(
                        "\(report.problems.isEmpty ? "OK" : "FAILED: \(report.problems.count) problem(s)"): "
                            + "\(report.blobs) blobs re-hashed, \(report.manifests) manifests checked, "
                            + "\(report.slidesDecrypted) slides decrypted")
                }
                return report.problems.isEmpty ? ExitCode.success : ExitCode.failure
            })
    }
}
