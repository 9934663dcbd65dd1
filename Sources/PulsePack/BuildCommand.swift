import Foundation
import PulseCommandLine
import PulseCore

/// `pulse-pack build`.
enum BuildCommand {
    static func command(terminal: Terminal) -> Command {
        Command(
            name: "build",
            abstract: "Package a series (and its sessions) or one session with its deck.",
            discussion: """
                <input> is a series file (it lists its sessions, each naming its deck) or a session file
                (its deck from --deck or its own "deck" field). Schema: docs/session-schema.md.
                Same input and secret → byte-identical package. The package secret is read from
                --secret-file, $PULSE_PACKAGE_SECRET (base64) or <out>/secret (created 0600 on first build).
                """,
            options: [
                .value("out", "<dir>", short: "o", help: "The package folder (created if missing)."),
                .value("deck", "<pdf-or-folder>", help: "The deck of a single session: a PDF or a folder of images."),
                .value("secret-file", "<file>", help: "Read the package secret (base64, mode 0600) from this file."),
                .value("jobs", "<n>", short: "j", help: "Threads per deck (default: the cores for a PDF, twice that for images)."),
                .value("seal-to", "<age1…>", help: "Write key tables only sealed to this age recipient (the key server); repeatable.", repeating: true),
                .flag("json", help: "Print a machine-readable summary on stdout."),
                .flag("quiet", short: "q", help: "No summary, no progress."),
            ],
            positionals: [Positional("input", help: "A series or session description file (JSON).")],
            run: { arguments in
                guard let out = arguments.value("out") else { throw UsageError("missing --out <dir>") }
                var options = Builder.Options(input: fileURL(try arguments.required("input")), output: fileURL(out))
                options.deck = arguments.value("deck").map(fileURL)
                options.secretFile = arguments.value("secret-file").map(fileURL)
                if let jobs = try arguments.int("jobs", in: 1...256) { options.workers = jobs }
                options.sealTo = arguments.values("seal-to")
                let json = arguments.flag("json"), quiet = arguments.flag("quiet")
                let report = try Builder(options: options).run { session, done, total in
                    if !quiet && !json { terminal.progress("  \(session)", done: done, total: total) }
                }
                terminal.endProgress()
                PulsePackCLI.printWarnings(report.warnings, terminal: terminal)
                if json {
                    terminal.print(String(decoding: report.json.prettyBytes.dropLast(), as: UTF8.self))
                } else if !quiet {
                    summary(report).forEach(terminal.print)
                }
                return ExitCode.success
            })
    }

    static func summary(_ report: BuildReport) -> [String] {
        var lines = ["Built \(report.package) in \(Format.seconds(report.seconds))"]
        for session in report.sessions {
            lines.append(
                "  session \(session.id): \(session.slides) slides (\(session.deckKind)), \(Format.bytes(session.bytes)) encrypted, "
                    + "\(session.newBlobs) new / \(session.reusedBlobs) reused blobs, deckVersion \(session.deckVersion), "
                    + "packageVersion \(Format.short(session.packageVersion))\(session.changed ? "" : " (unchanged)")")
        }
        for document in report.documents {
            lines.append("  \(document.kind) \(document.id): packageVersion \(Format.short(document.packageVersion))\(document.changed ? "" : " (unchanged)")")
        }
        lines.append("  images: \(report.newImages) new / \(report.reusedImages) reused")
        if let first = report.sessions.first {
            lines.append("Look at it: cat \(first.manifestPath)")
            lines.append("            pulse-pack verify \(report.package)")
        }
        return lines
    }
}
