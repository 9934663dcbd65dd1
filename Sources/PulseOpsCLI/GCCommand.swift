import Foundation
import PulseCommandLine
import PulseCore
import PulseOps
import PulseStore

/// `pulse-pack gc <package-or-target>`.
public enum GCCommand {
    public static let command = make(.process)

    static let keep = Option.int("keep", "<n>", in: 1...1_000_000, help: "Versions to keep per id, newest first (default: all).")
    static let grace = Option.value(
        "grace", "<duration>", help: "Keep what was published within this long, e.g. 7d, 12h, 30m, 0s (default 7d)."
    ) { text in try parseDuration(text, option: "--grace") }
    static let dryRun = Option.flag("dry-run", help: "List what would be deleted and why each kept version stays; delete nothing.")
    static let target = Positional.one("package-or-target", help: "A package folder, a pushed folder, or s3://bucket/prefix.")

    /// The command with its process environment injected (tests pass their own).
    public static func make(_ environment: OpsEnvironment) -> Command {
        Command(
            name: "gc",
            abstract: "Delete old versions, the blobs no kept version names, and stale temp files.",
            discussion: """
                Per session, series and appconfig id, gc keeps the current version (always, whatever --keep says), \
                the --keep newest and every version published within --grace, ordered and aged by the index's \
                history (publishedAt), never by file or push times; a blob stays if a kept version names it or it \
                was written within --grace. Nothing is deleted unless index.json, the blob list of every kept \
                version and the whole listing were read and parsed; the index is rewritten first, then files go, \
                then blobs, and every deletion is printed as it happens, also when gc stops halfway. On a target \
                gc holds its lease, so no push of it runs meanwhile; on a package folder the build lock. Works on \
                a package folder (both parts, key tables of versions no longer kept included), a pushed folder \
                and s3://bucket/prefix. --dry-run says why each kept version stays.
                Exit: 0 ok, 1 target failure, 64 usage, 65 not a package or a damaged index or blob list, \
                75 a push holds the target (see --wait).

                EXAMPLES:
                  pulse-pack gc out/pkg --keep 2 --grace 12h
                  pulse-pack gc s3://media/pulse --profile media --region eu-central-1 --keep 3 --grace 7d --dry-run
                  pulse-pack gc /srv/origin/pulse --keep 3 --json
                """,
            options: [keep, grace, dryRun] + TargetSpec.commonOptions,
            positionals: [target],
            validate: { arguments in try TargetSpec.parse(arguments[Self.target]).validate(arguments, environment: environment) },
            run: { arguments in
                try OpsCommand.run(environment) { try collect(arguments, environment) }
            })
    }

    static func collect(_ arguments: Arguments, _ environment: OpsEnvironment) throws {
        let keep = arguments[Self.keep]
        let grace = arguments[Self.grace] ?? 7 * 86400
        let wait = arguments[TargetSpec.wait] ?? 0
        let dryRun = arguments[Self.dryRun]
        let json = arguments[TargetSpec.json]
        let spec = try TargetSpec.parse(arguments[Self.target])
        let target = try spec.make(arguments, environment: environment)
        // Each deletion is printed as it happens: a gc stopped halfway (or killed) has said what is gone.
        let console = environment.console
        let output: @Sendable (String) -> Void = { console.out($0) }
        var deleted: (@Sendable (String) -> Void)?
        if !json { deleted = { path in output("deleted \(path)") } }
        let report: GCReport
        do {
            let package: PulsePackage? = if case let .folder(url) = spec { PulsePackage(root: url) } else { nil }
            switch try package?.layout() {
            case .legacy?:
                throw OpsError(.badInput, package!.root.path, package!.legacyMessage)
            case .current?:
                // A package folder: both parts, under the build lock so gc never races pulse-pack build.
                let lock = try PackageLock(package!)
                defer { withExtendedLifetime(lock) {} }
                var collector = PackageGarbageCollector(package: package!, keep: keep, grace: grace, dryRun: dryRun, now: environment.now())
                collector.deleted = deleted
                report = try collector.run()
            default:
                // A pushed folder or S3, under the target's lease.
                var collector = GarbageCollector(target: target, keep: keep, grace: grace, dryRun: dryRun, now: environment.now())
                collector.wait = wait
                collector.deleted = deleted
                report = try collector.run()
            }
        } catch let stopped as GCStopped {
            if json {
                environment.console.out(OpsCommand.json(Self.json(stopped.report, dryRun: dryRun, stopped: stopped.error.description)))
            } else {
                environment.console.out("gc \(target.displayName): stopped after deleting " + counts(stopped.report))
            }
            throw stopped.error
        }
        if json {
            environment.console.out(OpsCommand.json(Self.json(report, dryRun: dryRun)))
            return
        }
        if dryRun {
            for kept in report.kept { environment.console.out("keep \(kept.version): \(kept.reasons.joined(separator: ", "))") }
            for version in report.versions { environment.console.out("would drop \(version)") }
            for path in report.files + report.blobs + report.temporary { environment.console.out("would delete \(path)") }
        }
        environment.console.out(
            "gc \(target.displayName): \(dryRun ? "would delete" : "deleted") \(report.versions.count) versions: " + counts(report)
                + "; kept \(report.keptVersions) versions, \(report.keptBlobs) blobs")
    }

    static func counts(_ report: GCReport) -> String {
        "\(report.files.count) files, \(report.blobs.count) blobs, \(report.temporary.count) temp files (\(OpsCommand.byteText(report.bytes)))"
    }

    /// The `--json` object (docs/push-and-gc.md lists its fields).
    static func json(_ report: GCReport, dryRun: Bool, stopped: String? = nil) -> JSONValue {
        var fields: [String: JSONValue] = [
            "dryRun": .bool(dryRun), "versions": .array(report.versions.map(JSONValue.string)),
            "kept": .array(report.kept.map { ["version": .string($0.version), "reasons": .array($0.reasons.map(JSONValue.string))] }),
            "files": .array(report.files.map(JSONValue.string)), "blobs": .array(report.blobs.map(JSONValue.string)),
            "temporary": .array(report.temporary.map(JSONValue.string)), "bytes": .int(report.bytes),
            "keptVersions": .int(report.keptVersions), "keptBlobs": .int(report.keptBlobs),
        ]
        if let stopped { fields["stopped"] = .string(stopped) }
        return .object(fields)
    }

    /// `7d`, `12h`, `30m`, `45s` or `0`.
    static func parseDuration(_ text: String, option: String = "--grace") throws -> TimeInterval {
        if text == "0" { return 0 }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        guard let unit = text.last.flatMap({ units[$0] }), let number = Double(text.dropLast()), number >= 0,
              text.dropLast().allSatisfy({ $0.isNumber || $0 == "." }) else {
            throw UsageError("\(option) must be a duration like 7d, 12h, 30m or 0s, got \"\(text)\"")
        }
        return number * unit
    }
}
