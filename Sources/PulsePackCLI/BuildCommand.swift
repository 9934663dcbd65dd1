import Foundation
import PulseCommandLine
import PulseCore
import PulsePack

/// `pulse-pack build`.
enum BuildCommand {
    static let out = Option.value("out", "<dir>", short: "o", help: "The package folder (created if missing).").required()
    static let deck = Option.value("deck", "<pdf-or-folder>", help: "The deck of a single session: a PDF or a folder of images.")
    static let secretFile = Option.value(
        "secret-file", "<file>", help: "Read the package secret (base64, mode 0600) from this file; created if missing.")
    static let packageId = Option.value(
        "package-id", "<32 hex>", help: "The id of a new package (default: random); an existing package must have it.")
    static let jobs = Option.int(
        "jobs", "<n>", short: "j", in: 1...256, help: "Threads per deck (default: the cores for a PDF, twice that for images).")
    static let sealTo = Option.values(
        "seal-to", "<age1…>", help: "Write key tables only sealed to this age recipient (the key server); repeatable.")
    static let lenient = Option.flag("lenient", help: "Unknown fields in input files are warnings, not errors.")
    static let maxImageSize = Option.value(
        "max-image-size", "<size>", help: "Warn about a photo or logo larger than this, e.g. 500kB, 2MB (default 2MB).",
        mustBe: "a size such as 500kB or 2MB"
    ) { text in ByteCount.parse(text).flatMap { $0 > 0 ? $0 : nil } }
    static let json = Option.flag("json", help: "Print a machine-readable summary on stdout.")
    static let quiet = Option.flag("quiet", short: "q", help: "No summary, no progress.")
    static let input = Positional.one("input", help: "A series or session description file (JSON).")

    static func command(console: Console, environment: [String: String]) -> Command {
        Command(
            name: "build",
            abstract: "Package a series (and its sessions) or one session with its deck.",
            discussion: """
                <input> is a series file (it lists its sessions, each naming its deck) or a session file
                (its deck from --deck or its own "deck" field). Schema: docs/session-schema.md.
                The package is laid out by audience: <out>/public/ for a CDN (pulse-pack push), <out>/server/ for the
                sync server (docs/package-format.md). The package secret is read from --secret-file (created if
                missing), $PULSE_PACKAGE_SECRET (base64) or $XDG_CONFIG_HOME/pulse-pack/secrets/<packageId> (else
                ~/.config/…; created 0600 on the first build): never from inside the package folder.
                Same input, package id and secret, and SOURCE_DATE_EPOCH set → byte-identical package.
                A pulse-package/1 folder is moved to the current layout first.
                Unknown fields are errors (--lenient: warnings). Image folders are read in natural order of their
                names (slide2 before slide10, case ignored); .DS_Store, Thumbs.db and the like are ignored.
                --json: docs/json-output.md.
                """,
            examples: [
                "pulse-pack build Samples/series.json --out pkg              # a series and all its sessions",
                "pulse-pack build talk.json --deck talk.pdf --out pkg        # one session; --deck overrides its \"deck\"",
                "pulse-pack build Samples/series.json --out pkg --seal-to age1…   # key tables only sealed",
                "SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) pulse-pack build series.json --out pkg --package-id <32 hex> --secret-file ci.secret",
            ],
            options: [out, deck, secretFile, packageId, jobs, sealTo, lenient, maxImageSize, json, quiet],
            positionals: [input],
            run: { arguments in
                var options = Builder.Options(
                    input: fileURL(arguments[Self.input]), output: fileURL(arguments[Self.out]), environment: environment)
                options.deck = arguments[Self.deck].map(fileURL)
                options.secretFile = arguments[Self.secretFile].map(fileURL)
                options.packageId = try arguments[Self.packageId].map(packageID)
                if let jobs = arguments[Self.jobs] { options.workers = jobs }
                options.sealTo = arguments[Self.sealTo]
                options.lenient = arguments[Self.lenient]
                if let bytes = arguments[Self.maxImageSize] { options.warnImageBytes = bytes }
                let json = arguments[Self.json], quiet = arguments[Self.quiet]
                let bar = ProgressBar(console)
                let report = try Builder(options: options).run { session, done, total in
                    if !quiet && !json { bar.update("  \(session)", done: done, total: total) }
                }
                console.clearProgress()
                PulsePackCLI.printWarnings(report.warnings, console: console)
                if json {
                    console.out(json: report.json)
                } else if !quiet {
                    summary(report).forEach(console.out)
                }
                return ExitCode.success
            })
    }

    /// `--package-id`, parsed here at the edge: a bad one is bad input (exit 65) naming the option.
    static func packageID(_ text: String) throws -> PackageID {
        guard let id = PackageID(text) else {
            throw InputError(file: "--package-id", "\"\(text)\" is not a package id (32 lowercase hex digits)")
        }
        return id
    }

    static func summary(_ report: BuildReport) -> [String] {
        var lines = ["Built \(report.package) in \(Format.seconds(report.seconds))"]
        for session in report.sessions {
            lines.append(
                "  session \(session.id): \(session.slides) slides (\(session.deckKind.rawValue)), \(Format.bytes(session.bytes)) encrypted, "
                    + "\(session.newBlobs) new / \(session.reusedBlobs) reused blobs, deckVersion \(session.deckVersion), "
                    + "packageVersion \(Format.short(version: session.packageVersion))\(session.changed ? "" : " (unchanged)")")
        }
        for document in report.documents {
            lines.append("  \(document.kind.rawValue) \(document.id): packageVersion \(Format.short(version: document.packageVersion))\(document.changed ? "" : " (unchanged)")")
        }
        for session in report.sessions {
            guard let files = session.slideFiles else { continue }
            let shown = files.count <= 6 ? files : Array(files.prefix(3)) + ["…"] + Array(files.suffix(2))
            lines.append("  session \(session.id): slides in natural order of their names: " + shown.joined(separator: ", ")
                + (session.ignoredFiles.isEmpty ? "" : "; ignored: " + session.ignoredFiles.joined(separator: ", ")))
        }
        lines.append("  images: \(report.newImages + report.reusedImages) (\(Format.bytes(report.imageBytes))), "
            + "\(report.newImages) new / \(report.reusedImages) reused"
            + (report.largestImage.map { "; largest \(Format.bytes($0.bytes)): \($0.path)" } ?? ""))
        if let migrated = report.migrated { lines.append("  moved from the pulse-package/1 layout; package id \(migrated)") }
        lines.append("  package secret: \(report.secret)" + (report.secretCreated ? " (created: keep it, it is not in the package)" : ""))
        if let first = report.sessions.first {
            let package = ShellQuoting.quote(report.package)
            lines.append("Look at it: cat \(ShellQuoting.quote(first.manifestPath))")
            lines.append("            pulse-pack verify \(package)")
            lines.append("Publish:    pulse-pack push \(package) --to <folder or s3://bucket/prefix>   (public/ only)")
        }
        return lines
    }
}
