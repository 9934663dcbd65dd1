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
            abstract: "Delete blobs no retained manifest names, old manifest versions and stale temp files.",
            discussion: """
                Per session, series and appconfig id, gc keeps the current manifest (index.json), the --keep \
                newest versions (by file mtime or S3 LastModified) and every version published within --grace; \
                a blob stays if one of those names it or it was written within --grace. Manifests go before \
                blobs. Works on a package folder, a pushed folder and s3://bucket/prefix.
                """,
            options: [
                .value("keep", "<n>", help: "Manifest versions to keep per id, newest first (default: all)."),
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
        // A package folder that `build` uses has a .lock: take it so gc never races a build.
        var lock: PackageLock?
        if case let .folder(url) = spec, FileManager.default.fileExists(atPath: url.appendingPathComponent(".lock").path) {
            lock = try PackageLock(PulsePackage(root: url))
        }
        defer { withExtendedLifetime(lock) {} }
        let report = try GarbageCollector(target: target, keep: keep, grace: grace, dryRun: dryRun, now: environment.now()).run()
        if arguments.flag("json") {
            environment.standardOutput(OpsCommand.json([
                "dryRun": dryRun, "manifests": report.manifests, "blobs": report.blobs, "temporary": report.temporary,
                "bytes": report.bytes, "keptManifests": report.keptManifests, "keptBlobs": report.keptBlobs,
            ]))
            return
        }
        let verb = dryRun ? "would delete" : "deleted"
        for path in report.manifests + report.blobs + report.temporary { environment.standardOutput("\(verb) \(path)") }
        environment.standardOutput(
            "gc \(target.displayName): \(verb) \(report.manifests.count) manifests, \(report.blobs.count) blobs, "
                + "\(report.temporary.count) temp files (\(OpsCommand.byteText(report.bytes))); kept "
                + "\(report.keptManifests) manifests, \(report.keptBlobs) blobs")
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
