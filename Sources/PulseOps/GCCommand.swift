import Foundation
import PulseCommandLine
import PulseStore

/// `pulse-pack gc <package-or-target>`.
public enum GCCommand {
    public static let command = make(.process)

    /// The command with its process environment injected (tests pass their own).
    public static func make(_ environment: OpsEnvironment) -> Command {
        Command(
            name: "gc",
            abstract: "Delete old versions, the blobs no kept version names, and stale temp files.",
            discussion: """
                Per session, series and appconfig id, gc keeps the current version, the --keep newest and every \
                version published within --grace, ordered and aged by the index's history (publishedAt); a blob \
                stays if a kept version names it or it was written within --grace. The index is rewritten first, \
                then files go, then blobs. Works on a package folder (both parts, under the build lock, key \
                tables of versions no longer kept included), a pushed folder and s3://bucket/prefix.
                """,
            options: [
                .value("keep", "<n>", help: "Versions to keep per id, newest first (default: all)."),
                .value("grace", "<duration>", help: "Keep what was published within this long, e.g. 7d, 12h, 30m, 0s (default 7d)."),
                .flag("dry-run", help: "List what would be deleted; delete nothing."),
            ] + TargetSpec.commonOptions,
            positionals: [Positional("package-or-target", help: "A package folder, a pushed folder, or s3://bucket/prefix.")],
            run: { arguments in
                try OpsCommand.run(environment) { try collect(arguments, environment) }
            })
    }

    static func collect(_ arguments: Arguments, _ environment: OpsEnvironment) throws {
        let keep = try arguments.int("keep", in: 1...1_000_000)
        let grace = try parseDuration(arguments.value("grace") ?? "7d")
        let dryRun = arguments.flag("dry-run")
        let spec = try TargetSpec.parse(try arguments.required("package-or-target"))
        let target = try spec.make(arguments, environment: environment)
        let report: GCReport
        let package: PulsePackage? = if case let .folder(url) = spec { PulsePackage(root: url) } else { nil }
        switch try package?.layout() {
        case .legacy?:
            throw OpsError(.badInput, package!.root.path, package!.legacyMessage)
        case .current?:
            // A package folder: both parts, under the build lock so gc never races pulse-pack build.
            let lock = try PackageLock(package!)
            defer { withExtendedLifetime(lock) {} }
            report = try PackageGarbageCollector(package: package!, keep: keep, grace: grace, dryRun: dryRun, now: environment.now()).run()
        default:
            // A pushed folder or S3.
            report = try GarbageCollector(target: target, keep: keep, grace: grace, dryRun: dryRun, now: environment.now()).run()
        }
        if arguments.flag("json") {
            environment.standardOutput(OpsCommand.json([
                "dryRun": dryRun, "versions": report.versions, "files": report.files, "blobs": report.blobs,
                "temporary": report.temporary, "bytes": report.bytes, "keptVersions": report.keptVersions, "keptBlobs": report.keptBlobs,
            ]))
            return
        }
        let verb = dryRun ? "would delete" : "deleted"
        for path in report.files + report.blobs + report.temporary { environment.standardOutput("\(verb) \(path)") }
        environment.standardOutput(
            "gc \(target.displayName): \(verb) \(report.versions.count) versions: \(report.files.count) files, \(report.blobs.count) blobs, "
                + "\(report.temporary.count) temp files (\(OpsCommand.byteText(report.bytes))); kept "
                + "\(report.keptVersions) versions, \(report.keptBlobs) blobs")
    }

    /// `7d`, `12h`, `30m`, `45s` or `0`.
    static func parseDuration(_ text: String) throws -> TimeInterval {
        if text == "0" { return 0 }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        guard let unit = text.last.flatMap({ units[$0] }), let number = Double(text.dropLast()), number >= 0,
              text.dropLast().allSatisfy({ $0.isNumber || $0 == "." }) else {
            throw UsageError("--grace must be a duration like 7d, 12h, 30m or 0s, got \"\(text)\"")
        }
        return number * unit
    }
}
